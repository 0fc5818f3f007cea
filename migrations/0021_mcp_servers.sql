-- A partner's MCP server as a source of connected actions (docs/guides/connected-actions.md, From an MCP server):
-- each of its tools offered is an action naming the server, removed with it.
CREATE TABLE `mcp_servers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`url` text NOT NULL,
	`secret` text NOT NULL,
	`tools` text NOT NULL,
	`listed_at` text NOT NULL,
	`list_error` text,
	`api_key_id` integer,
	`oauth_grant_id` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mcp_servers_business_side` ON `mcp_servers` (`business_id`,`oauth_grant_id`);--> statement-breakpoint
CREATE INDEX `mcp_servers_listed` ON `mcp_servers` (`listed_at`);--> statement-breakpoint
ALTER TABLE `actions` ADD `mcp_server_id` integer REFERENCES mcp_servers(id) ON DELETE cascade;--> statement-breakpoint
CREATE INDEX `actions_mcp_server` ON `actions` (`mcp_server_id`);--> statement-breakpoint
-- Numbered by the shard that inserts the row, as every table since migration 0018 (src/db/ids.ts).
INSERT INTO `id_sequences` (`name`, `next`) VALUES ('mcp_servers', 0);--> statement-breakpoint
CREATE TRIGGER `mcp_servers_id_sequence` AFTER INSERT ON `mcp_servers`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'mcp_servers')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'mcp_servers')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'mcp_servers';
END;
