-- Issue 15, owner sides: webhook endpoints and actions already record the principal that created them (api_key_id or
-- oauth_grant_id, set at creation since the first migration). A row whose oauth_grant_id is null belongs to the
-- business's API keys, so every existing row has its side without an update; the side only needs its index.
-- last_used_at: the owner's overview, written at most once an hour per credential.
DROP INDEX `webhook_endpoints_business`;--> statement-breakpoint
CREATE INDEX `webhook_endpoints_business_side` ON `webhook_endpoints` (`business_id`,`oauth_grant_id`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` text;--> statement-breakpoint
ALTER TABLE `oauth_grants` ADD `last_used_at` text;--> statement-breakpoint
CREATE INDEX `actions_business_side` ON `actions` (`business_id`,`oauth_grant_id`);