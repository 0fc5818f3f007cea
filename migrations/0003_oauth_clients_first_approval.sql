ALTER TABLE `oauth_clients` ADD `first_approved_at` text;--> statement-breakpoint
CREATE INDEX `oauth_clients_unapproved` ON `oauth_clients` (`created_at`) WHERE "oauth_clients"."first_approved_at" is null;--> statement-breakpoint
-- Written by hand after drizzle-kit generate: clients already connected to a business were approved, so the cleanup
-- of never-approved clients must not take them. The earliest connection stands for the first approval.
UPDATE `oauth_clients` SET `first_approved_at` = (SELECT min(`created_at`) FROM `oauth_grants` WHERE `oauth_grants`.`client_id` = `oauth_clients`.`id`) WHERE `first_approved_at` IS NULL;
