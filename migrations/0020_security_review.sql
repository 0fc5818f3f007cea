-- An owner session unused for 30 minutes ends (docs/architecture.md, Sign-in): its last use, recorded at most every
-- 5 minutes. Null until the first record, when the sign-in (`created_at`) is the last use.
ALTER TABLE `owner_sessions` ADD `last_used_at` text;--> statement-breakpoint
-- The sandbox businesses listed in the directory, counted at each sandbox creation against the cap of those in use
-- at once (docs/guides/sandbox.md, Budgets): a partial index, so the count reads the sandboxes' entries only.
CREATE INDEX `business_shards_sandbox` ON `business_shards` (`sandbox`) WHERE "business_shards"."sandbox" = 1;
