ALTER TABLE `owners` ADD `last_signed_in_at` text;--> statement-breakpoint
ALTER TABLE `business_shards` ADD `sandbox` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `businesses_sandbox_created` ON `businesses` (`created_at`) WHERE "businesses"."sandbox" = 1;