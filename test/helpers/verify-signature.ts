/**
 * A receiver's verification with nothing but WebCrypto: the example of docs/webhooks.md, kept here so that the
 * documented code is the tested code.
 */
export async function verifyWebhookSignature(rawBody: string, header: string, secret: string, toleranceSeconds = 300) {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const signature = new Uint8Array((parts.v1 ?? "").match(/../g)?.map((byte) => Number.parseInt(byte, 16)) ?? []);
  return crypto.subtle.verify("HMAC", key, signature, new TextEncoder().encode(`${timestamp}.${rawBody}`));
}
