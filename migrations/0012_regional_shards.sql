CREATE TABLE `business_shards` (
	`business_id` text PRIMARY KEY NOT NULL,
	`shard` text NOT NULL,
	`moving_since` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `owner_emails` (
	`email` text PRIMARY KEY NOT NULL,
	`business_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `owner_emails_business` ON `owner_emails` (`business_id`);