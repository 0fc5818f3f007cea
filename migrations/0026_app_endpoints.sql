-- An app's own webhook endpoints (docs/guides/webhooks.md, Subscribing once as an app), in the global database, and
-- each connected business's copy among its endpoints.
CREATE TABLE `app_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`client_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `app_endpoints_client` ON `app_endpoints` (`client_id`);--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `app_endpoint_id` integer;--> statement-breakpoint
CREATE INDEX `webhook_endpoints_app_endpoint` ON `webhook_endpoints` (`app_endpoint_id`);--> statement-breakpoint
-- Numbered by the shard that inserts the row, as every table since migration 0018 (src/db/ids.ts).
INSERT INTO `id_sequences` (`name`, `next`) VALUES ('app_endpoints', 0);--> statement-breakpoint
CREATE TRIGGER `app_endpoints_id_sequence` AFTER INSERT ON `app_endpoints`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'app_endpoints')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'app_endpoints')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'app_endpoints';
END;
