-- Paging and sync (docs/decisions.md, Paging and sync): bookings and orders carry `updated_at`, when the service stored
-- their latest change, for `updated_since` on GET /appointments and GET /orders.
-- Written by hand after drizzle-kit generate: SQLite adds a NOT NULL column only with a non-null default, so each
-- column comes with '' and is backfilled from created_at (a snapshot stored once was last changed when it was made)
-- before its index is built. The service writes updated_at on every insert and update (src/domain/platform/changes.ts).
ALTER TABLE `bookings` ADD `updated_at` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `bookings` SET `updated_at` = `created_at`;--> statement-breakpoint
CREATE INDEX `bookings_business_updated` ON `bookings` (`business_id`,`updated_at`);--> statement-breakpoint
ALTER TABLE `orders` ADD `updated_at` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `orders` SET `updated_at` = `created_at`;--> statement-breakpoint
CREATE INDEX `orders_business_updated` ON `orders` (`business_id`,`updated_at`);
