CREATE TABLE `credential_forwards` (
	`credential_hash` text PRIMARY KEY NOT NULL,
	`shard` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `businesses` ADD `moving_since` text;