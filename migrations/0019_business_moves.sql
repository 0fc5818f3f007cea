-- The moves under way, one row per business, in the global database (docs/scaling.md, Moving a business between
-- shards): each step of a move continues from its row and records how far it got. Additive: no version reads it before.
CREATE TABLE `business_moves` (
	`business_id` text PRIMARY KEY NOT NULL,
	`from_shard` text NOT NULL,
	`to_shard` text NOT NULL,
	`phase` text NOT NULL,
	`table_name` text NOT NULL,
	`after_rowid` integer DEFAULT 0 NOT NULL,
	`rows_copied` integer DEFAULT 0 NOT NULL,
	`tally` text,
	`table_rows` text NOT NULL,
	`aborted` text,
	`started_at` text NOT NULL
);
