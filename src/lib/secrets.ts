import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64urlNoPadding, encodeHexLowerCase } from "@oslojs/encoding";

const encoder = new TextEncoder();

/** `prefix` + 32 random bytes in base64url: 256 bits, above the 128 bits RFC 9700 asks of secrets. */
export function randomToken(prefix: string, bytes = 32): string {
  return prefix + encodeBase64urlNoPadding(crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * Keys, tokens and codes are stored only as this hash and looked up by it, so that a leak of the database gives no
 * usable credential (docs/architecture.md, Principals and owner sides).
 */
export function sha256Hex(value: string): string {
  return encodeHexLowerCase(sha256(encoder.encode(value)));
}

/**
 * The same hash by the runtime's native SHA-256, for the request path: every partner request hashes its credential,
 * and the JavaScript one costs about 50 µs there (docs/performance.md).
 */
export async function sha256HexNative(value: string): Promise<string> {
  return encodeHexLowerCase(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value))));
}
