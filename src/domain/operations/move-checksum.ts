import { sha256 } from "@oslojs/crypto/sha2";
import type { RowsTally } from "../../db/schema";

/*
 * How a move compares a table's rows of the business in the shard it leaves and the one it goes to (docs/scaling.md,
 * Moving a business between shards): their count, and the sum modulo 2^52 of the first 6 bytes of each row's SHA-256
 * over its canonical JSON. A sum does not depend on the order the rows are read in, so each shard is read in pages in
 * its own rowid order; a 6-byte digest added to a sum below 2^52 stays below 2^53, an exact integer in a double.
 */

const MODULUS = 2 ** 52;

export const NO_ROWS: RowsTally = { rows: 0, checksum: 0 };

/**
 * A row's JSON with every object's members in key order: a row reads as the same text in both shards, whatever order
 * its columns, or the members of a JSON column, were written in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const encoder = new TextEncoder();

/** The first 6 bytes of the SHA-256 of the row's canonical JSON, as a number below 2^48. */
function digest(row: unknown): number {
  return sha256(encoder.encode(canonicalJson(row)))
    .subarray(0, 6)
    .reduce((sum, byte) => sum * 256 + byte, 0);
}

/** The tally with `rows` counted and added to its checksum. */
export function tallied(tally: RowsTally, rows: unknown[]): RowsTally {
  let { checksum } = tally;
  for (const row of rows) checksum = (checksum + digest(row)) % MODULUS;
  return { rows: tally.rows + rows.length, checksum };
}
