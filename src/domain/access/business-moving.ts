import { unavailable } from "../../lib/api-error";

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
