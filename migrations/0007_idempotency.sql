-- Issue 18, item 1: Idempotency-Key on every POST under /api/v1 (DESIGN.md, Beyond the spec: Idempotency;
-- docs/idempotency.md). One row per (principal, key): the unique index is what concurrent first requests race on.
-- Rows older than 24 hours count as absent and are replaced by the next claim; their deletion is the retention cron's
-- (issue 20).
CREATE TABLE `idempotency_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`principal` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer,
	`headers` text,
	`body` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_keys_principal_key` ON `idempotency_keys` (`principal`,`key`);