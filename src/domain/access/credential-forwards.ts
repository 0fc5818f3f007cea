import { eq } from "drizzle-orm";
import { credentialForwards } from "../../db/schema";
import { isShardName, type ShardName } from "../../db/shards";
import { runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";

/*
 * A credential keeps naming the shard it was issued in; after its business moves, that shard holds a forward to the
 * business's new one (docs/scaling.md, Moving a business between shards). A credential found where it names costs
 * nothing more; a forwarded one costs one more round trip, on the shard the forward names, where its own row is the
 * one checked, so a revocation there takes effect at once.
 */

/** The forward of a credential's hash, read in the same batch as the credential's own lookup. */
export const forwardLookup = statement<{ credential: string }>()((db, { credential }) =>
  db
    .select({ shard: credentialForwards.shard })
    .from(credentialForwards)
    .where(eq(credentialForwards.credentialHash, credential)),
);

/** The shard a forward's rows name, if any (a shard no longer listed is no forward). */
export function forwardedShard(rows: unknown): ShardName | undefined {
  const shard = (rows as { shard: string }[])[0]?.shard;
  return shard !== undefined && isShardName(shard) ? shard : undefined;
}

/**
 * A credential not found in the shard it names, found where its forwards lead: `find` looks for it on each shard a
 * forward names, in turn, until it is found. A business moved more than once left a forward in each shard it left,
 * and a forward never leads back (a move into a shard drops that shard's forwards of the business). Each hop is its
 * forward's read and `find`'s: a credential moved once costs two round trips, as a single forward did.
 */
export async function foundThroughForwards<T>(
  deps: Dependencies,
  credentialHash: string,
  find: (there: Dependencies) => Promise<T | undefined>,
): Promise<{ there: Dependencies; found: T } | undefined> {
  const visited = new Set<string>([deps.shard]);
  for (let from = deps; ; ) {
    const [rows] = await runStatements(from.db, [forwardLookup({ credential: credentialHash })]);
    const forward = forwardedShard(rows);
    if (forward === undefined || visited.has(forward)) return undefined;
    visited.add(forward);
    from = deps.onShard(forward);
    const found = await find(from);
    if (found !== undefined) return { there: from, found };
  }
}
