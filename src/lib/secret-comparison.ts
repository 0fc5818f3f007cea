const encoder = new TextEncoder();

/* The comparison of secrets, by the Workers runtime's own constant-time comparison (apart from secrets.ts, which
 * Node's scripts import too, where `crypto.subtle` has none). */

/**
 * Compares two secrets without leaking through timing where they differ, by the runtime's constant-time comparison.
 * Of different lengths, a secret is compared with itself, so that the time taken is that of a comparison too.
 */
export function secretsEqual(a: string, b: string): boolean {
  const [left, right] = [encoder.encode(a), encoder.encode(b)];
  if (left.byteLength !== right.byteLength) return !crypto.subtle.timingSafeEqual(left, left);
  return crypto.subtle.timingSafeEqual(left, right);
}
