-- The app as itself (docs/oauth.md, The app as itself): access tokens of the client credentials grant, in the global
-- database beside the clients, naming no business.
CREATE TABLE `app_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`resource` text,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `app_tokens_expires` ON `app_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `app_tokens_client` ON `app_tokens` (`client_id`);
