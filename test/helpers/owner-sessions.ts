import { eq } from "drizzle-orm";
import { ownerSessions } from "../../src/db/schema";
import { sha256Hex } from "../../src/lib/secrets";
import { db } from "./fixtures";
import type { CookieJar } from "./oauth";

const hashOf = (jar: CookieJar) => sha256Hex(jar.cookies.get("__Host-owner_session") ?? "");

/** The stored row of the browser's owner session (of a business in the fixtures' default shard). */
export const sessionRow = (jar: CookieJar) =>
  db
    .select()
    .from(ownerSessions)
    .where(eq(ownerSessions.tokenHash, hashOf(jar)))
    .get();

const earlier = (at: string, ms: number) => new Date(Date.parse(at) - ms).toISOString();

/**
 * Drives the clock of the browser's owner session through its stored times, as the HTTP routes tell time by the
 * Worker's own clock: `ms` milliseconds pass for the session, whose sign-in, last recorded use and end all move that
 * far into the past.
 */
export async function timePasses(jar: CookieJar, ms: number) {
  const row = await sessionRow(jar);
  if (!row) throw new Error("no owner session in the jar");
  await db
    .update(ownerSessions)
    .set({
      createdAt: earlier(row.createdAt, ms),
      expiresAt: earlier(row.expiresAt, ms),
      lastUsedAt: row.lastUsedAt && earlier(row.lastUsedAt, ms),
    })
    .where(eq(ownerSessions.id, row.id));
}
