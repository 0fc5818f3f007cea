-- Issue 8: one app connection per (client, business). The unique index also serves lookups by client, so the plain
-- index on client_id goes.
DROP INDEX `oauth_grants_client`;--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_grants_client_business` ON `oauth_grants` (`client_id`,`business_id`);