import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from "@oslojs/encoding";

/**
 * Owner passwords: PBKDF2-SHA256 through WebCrypto, at the most iterations Workers allow, with a salt per owner
 * (docs/architecture.md, Sign-in), stored as `pbkdf2-sha256$<iterations>$<salt base64url>$<hash base64url>` (no
 * padding): PBKDF2-HMAC-SHA256 over the 16 raw salt bytes, 32-byte hash. The seed (scripts/seed.ts) hashes its
 * owner's password with this module.
 */
const SCHEME = "pbkdf2-sha256";

/** 100,000 is the most iterations the Workers runtime's PBKDF2 accepts; it refuses more with NotSupportedError. */
export const PASSWORD_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;

const encoder = new TextEncoder();

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, iterations = PASSWORD_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await pbkdf2(password, salt, iterations);
  return `${SCHEME}$${iterations}$${encodeBase64urlNoPadding(salt)}$${encodeBase64urlNoPadding(hash)}`;
}

type StoredHash = { iterations: number; salt: Uint8Array; hash: Uint8Array };

function parseStoredHash(stored: string): StoredHash | undefined {
  const [scheme, iterationsText, saltText, hashText, ...rest] = stored.split("$");
  if (scheme !== SCHEME || rest.length > 0 || !iterationsText || !saltText || !hashText) return undefined;
  if (!/^[1-9]\d{0,6}$/.test(iterationsText)) return undefined;
  const iterations = Number(iterationsText);
  if (iterations > PASSWORD_ITERATIONS) return undefined;
  try {
    const salt = decodeBase64urlIgnorePadding(saltText);
    const hash = decodeBase64urlIgnorePadding(hashText);
    return hash.length * 8 === HASH_BITS && salt.length > 0 ? { iterations, salt, hash } : undefined;
  } catch {
    return undefined;
  }
}

/** A stored hash that matches no password, so that an unknown email costs the same time as a wrong password. */
const DECOY = {
  iterations: PASSWORD_ITERATIONS,
  salt: new Uint8Array(SALT_BYTES),
  hash: new Uint8Array(HASH_BITS / 8),
} satisfies StoredHash;

/**
 * Whether `password` matches `stored`, compared in constant time. `stored` undefined (no such owner) or unreadable
 * still derives a full-cost hash, so that the answer time does not tell which email addresses have an account.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parsed = stored === undefined ? undefined : parseStoredHash(stored);
  const target = parsed ?? DECOY;
  const derived = await pbkdf2(password, target.salt, target.iterations);
  return constantTimeEqual(derived, target.hash) && parsed !== undefined;
}
