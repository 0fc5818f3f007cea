import { ID_RANGE_SIZE, SHARDS, type ShardName } from "./shards";

/**
 * The statements that start a shard's row ids at its range (docs/scaling.md, Ids unique across shards): every table
 * with an AUTOINCREMENT id draws its next id from `sqlite_sequence`, so setting each table's sequence to the range's
 * start makes the shard's ids disjoint from every other shard's. Then the ids partners hold (deliveries'
 * `X-Service-Delivery`, endpoints, actions, intakes, responses) never collide across businesses of different shards,
 * and a business can move to another shard with its ids unchanged. Safe to run again: a sequence already in the range
 * is left where it is. Run after the migrations (scripts/migrate.ts; test/setup.ts).
 */
export function idRangeStatements(shard: ShardName): string[] {
  const start = SHARDS[shard].idRange * ID_RANGE_SIZE;
  if (start === 0) return [];
  return [
    `INSERT INTO sqlite_sequence (name, seq) SELECT name, ${start} FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%' AND name <> 'd1_migrations' AND name NOT IN (SELECT name FROM sqlite_sequence)`,
    `UPDATE sqlite_sequence SET seq = ${start} WHERE seq < ${start} AND name <> 'd1_migrations'`,
  ];
}
