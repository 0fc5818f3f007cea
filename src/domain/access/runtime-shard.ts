import type { GlobalDatabase } from "../../db/client";
import type { ShardName } from "../../db/shards";
import { notFound, unavailable } from "../../lib/errors";
import { shardOfBusiness } from "./directory";

/**
 * How long a write refused during a move waits: a move takes minutes (docs/scaling.md, Moving a business between
 * shards), and the core platform and the runtime retry.
 */
export const MOVING_RETRY_AFTER_SECONDS = 30;

/**
 * The refusal of a write while its business is being moved, for every surface that writes (the runtime API, partner
 * requests, the owner's pages): its rows are being copied from the shard the write would go to, so the write would be
 * left behind.
 */
export const businessMoving = () =>
  unavailable(
    `The business is being moved to another database, and its data cannot change until the move ends: retry in ${MOVING_RETRY_AFTER_SECONDS} seconds.`,
    MOVING_RETRY_AFTER_SECONDS,
  );

/** A runtime call only reads the business (its context), or writes it (a report, an action call, a plan change). */
export type RuntimeAccess = "read" | "write";

/**
 * The shard a runtime call for `businessId` runs on (the Secretary runtime API, HTTP and RPC): the directory's, in one
 * indexed read of the global database. While the business is being moved its rows are copied from that shard, so a
 * write there would be left behind: writes are refused with 503 and `Retry-After` until the move ends, reads go on
 * (docs/scaling.md, Moving a business between shards). An unknown business reads as legacy, where the call answers its
 * 404 as before sharding; a sandbox business answers the same 404 here.
 */
export async function shardForRuntime(
  global: GlobalDatabase,
  businessId: string,
  access: RuntimeAccess,
): Promise<ShardName> {
  const { shard, moving, sandbox } = await shardOfBusiness(global, businessId);
  // A sandbox business is no business of the core platform's: no real report, plan change or Secretary call reaches it,
  // so the runtime API answers it as it answers an unknown one (docs/decisions.md, Sandbox businesses). The sandbox's
  // own operations call the domain directly, never through here.
  if (sandbox) throw notFound("No business has that id.");
  if (moving && access === "write") throw businessMoving();
  return shard;
}
