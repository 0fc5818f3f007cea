-- An app manages its registration (docs/oauth.md, Managing your app; RFC 7592): the previous secret of a rotation,
-- accepted beside the new one until it expires; the registration access token, as its SHA-256; the revision a
-- shard's copy of the client is compared by; and the deletion, after which the client is unknown.
ALTER TABLE `oauth_clients` ADD `previous_secret_hash` text;--> statement-breakpoint
ALTER TABLE `oauth_clients` ADD `previous_secret_expires_at` text;--> statement-breakpoint
ALTER TABLE `oauth_clients` ADD `registration_token_hash` text;--> statement-breakpoint
ALTER TABLE `oauth_clients` ADD `revision` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth_clients` ADD `deleted_at` text;
