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
 * The dependencies of the shard a credential's forward names, read in `deps.shard` (one round trip), or undefined when
 * it has none: for a credential not found in the shard it names.
 */
export async function forwardedDependencies(
  deps: Dependencies,
  credentialHash: string,
): Promise<Dependencies | undefined> {
  const [rows] = await runStatements(deps.db, [forwardLookup({ credential: credentialHash })]);
  const forward = forwardedShard(rows);
  return forward === undefined || forward === deps.shard ? undefined : deps.onShard(forward);
}
