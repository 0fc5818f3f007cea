-- Ids that never collide across shards, whatever moves happen (docs/scaling.md, Ids unique across shards).
-- Bookings and orders carry the core platform's ids, unique per business: they are keyed by (business, id), so two
-- businesses with the same number never meet in one table. No table references them, so each is rebuilt in place.
CREATE TABLE `__new_bookings` (
	`id` integer NOT NULL,
	`business_id` text NOT NULL,
	`status` text NOT NULL,
	`date` text NOT NULL,
	`time` text NOT NULL,
	`duration_minutes` integer NOT NULL,
	`service_id` text NOT NULL,
	`service_name` text NOT NULL,
	`service_price` text NOT NULL,
	`client_name` text,
	`client_email` text,
	`client_phone` text,
	`payment_status` text NOT NULL,
	`payment_amount_paid` real NOT NULL,
	`payment_agreed_amount` real,
	`payment_currency` text NOT NULL,
	`payment_reference` text,
	`location` text,
	`notes` text,
	`reschedule_count` integer NOT NULL,
	`original_date` text,
	`original_time` text,
	`reschedule_link` text,
	`cancel_link` text,
	`conversation_id` text,
	`created_at` text NOT NULL,
	`report_token` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`business_id`, `id`),
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_bookings`("id", "business_id", "status", "date", "time", "duration_minutes", "service_id", "service_name", "service_price", "client_name", "client_email", "client_phone", "payment_status", "payment_amount_paid", "payment_agreed_amount", "payment_currency", "payment_reference", "location", "notes", "reschedule_count", "original_date", "original_time", "reschedule_link", "cancel_link", "conversation_id", "created_at", "report_token", "updated_at") SELECT "id", "business_id", "status", "date", "time", "duration_minutes", "service_id", "service_name", "service_price", "client_name", "client_email", "client_phone", "payment_status", "payment_amount_paid", "payment_agreed_amount", "payment_currency", "payment_reference", "location", "notes", "reschedule_count", "original_date", "original_time", "reschedule_link", "cancel_link", "conversation_id", "created_at", "report_token", "updated_at" FROM `bookings`;--> statement-breakpoint
DROP TABLE `bookings`;--> statement-breakpoint
ALTER TABLE `__new_bookings` RENAME TO `bookings`;--> statement-breakpoint
CREATE INDEX `bookings_business_created` ON `bookings` (`business_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `bookings_business_status_created` ON `bookings` (`business_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `bookings_business_date` ON `bookings` (`business_id`,`date`,`time`,`id`);--> statement-breakpoint
CREATE INDEX `bookings_business_status_date` ON `bookings` (`business_id`,`status`,`date`,`time`,`id`);--> statement-breakpoint
CREATE INDEX `bookings_business_updated` ON `bookings` (`business_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `__new_orders` (
	`id` integer NOT NULL,
	`business_id` text NOT NULL,
	`status` text NOT NULL,
	`items` text NOT NULL,
	`total` real NOT NULL,
	`pay_on_delivery` integer NOT NULL,
	`fulfillment_type` text NOT NULL,
	`delivery_address` text,
	`delivery_notes` text,
	`tracking_number` text,
	`carrier` text,
	`ready_at` text,
	`estimated_ready_at` text,
	`tracking_url` text,
	`client_name` text,
	`client_email` text,
	`client_phone` text,
	`payment_status` text NOT NULL,
	`payment_amount_paid` real NOT NULL,
	`notes` text,
	`conversation_id` text,
	`created_at` text NOT NULL,
	`report_token` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`business_id`, `id`),
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_orders`("id", "business_id", "status", "items", "total", "pay_on_delivery", "fulfillment_type", "delivery_address", "delivery_notes", "tracking_number", "carrier", "ready_at", "estimated_ready_at", "tracking_url", "client_name", "client_email", "client_phone", "payment_status", "payment_amount_paid", "notes", "conversation_id", "created_at", "report_token", "updated_at") SELECT "id", "business_id", "status", "items", "total", "pay_on_delivery", "fulfillment_type", "delivery_address", "delivery_notes", "tracking_number", "carrier", "ready_at", "estimated_ready_at", "tracking_url", "client_name", "client_email", "client_phone", "payment_status", "payment_amount_paid", "notes", "conversation_id", "created_at", "report_token", "updated_at" FROM `orders`;--> statement-breakpoint
DROP TABLE `orders`;--> statement-breakpoint
ALTER TABLE `__new_orders` RENAME TO `orders`;--> statement-breakpoint
CREATE INDEX `orders_business_created` ON `orders` (`business_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_business_status_created` ON `orders` (`business_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_business_updated` ON `orders` (`business_id`,`updated_at`);
--> statement-breakpoint
-- Every other table's id is numbered by the shard that inserts the row (src/db/ids.ts), from the table's row here:
-- `next` is at least the next id, and its value modulo 16 is the shard's slot. Each row starts in slot 0 (legacy's);
-- the shard's own slot is set after the migrations (scripts/migrate.ts). A row of the shard's slot at or past `next`
-- moves it on; a row copied in from another shard, of another slot, leaves it where it is.
CREATE TABLE `id_sequences` (
	`name` text PRIMARY KEY NOT NULL,
	`next` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `id_sequences` (`name`, `next`) VALUES
	('owners', 0),
	('owner_sessions', 0),
	('api_keys', 0),
	('oauth_grants', 0),
	('webhook_endpoints', 0),
	('webhook_deliveries', 0),
	('delivery_attempts', 0),
	('actions', 0),
	('action_calls', 0),
	('intakes', 0),
	('intake_responses', 0),
	('owner_knowledge_sources', 0),
	('idempotency_keys', 0);
--> statement-breakpoint
CREATE TRIGGER `owners_id_sequence` AFTER INSERT ON `owners`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'owners')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'owners')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'owners';
END;
--> statement-breakpoint
CREATE TRIGGER `owner_sessions_id_sequence` AFTER INSERT ON `owner_sessions`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'owner_sessions')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'owner_sessions')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'owner_sessions';
END;
--> statement-breakpoint
CREATE TRIGGER `api_keys_id_sequence` AFTER INSERT ON `api_keys`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'api_keys')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'api_keys')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'api_keys';
END;
--> statement-breakpoint
CREATE TRIGGER `oauth_grants_id_sequence` AFTER INSERT ON `oauth_grants`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'oauth_grants')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'oauth_grants')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'oauth_grants';
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_endpoints_id_sequence` AFTER INSERT ON `webhook_endpoints`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'webhook_endpoints')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'webhook_endpoints')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'webhook_endpoints';
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_id_sequence` AFTER INSERT ON `webhook_deliveries`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'webhook_deliveries')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'webhook_deliveries')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'webhook_deliveries';
END;
--> statement-breakpoint
CREATE TRIGGER `delivery_attempts_id_sequence` AFTER INSERT ON `delivery_attempts`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'delivery_attempts')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'delivery_attempts')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'delivery_attempts';
END;
--> statement-breakpoint
CREATE TRIGGER `actions_id_sequence` AFTER INSERT ON `actions`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'actions')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'actions')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'actions';
END;
--> statement-breakpoint
CREATE TRIGGER `action_calls_id_sequence` AFTER INSERT ON `action_calls`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'action_calls')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'action_calls')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'action_calls';
END;
--> statement-breakpoint
CREATE TRIGGER `intakes_id_sequence` AFTER INSERT ON `intakes`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'intakes')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'intakes')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'intakes';
END;
--> statement-breakpoint
CREATE TRIGGER `intake_responses_id_sequence` AFTER INSERT ON `intake_responses`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'intake_responses')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'intake_responses')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'intake_responses';
END;
--> statement-breakpoint
CREATE TRIGGER `owner_knowledge_sources_id_sequence` AFTER INSERT ON `owner_knowledge_sources`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'owner_knowledge_sources')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'owner_knowledge_sources')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'owner_knowledge_sources';
END;
--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_id_sequence` AFTER INSERT ON `idempotency_keys`
WHEN NEW.`id` >= (SELECT `next` FROM `id_sequences` WHERE `name` = 'idempotency_keys')
	AND (NEW.`id` - (SELECT `next` FROM `id_sequences` WHERE `name` = 'idempotency_keys')) % 16 = 0
BEGIN
	UPDATE `id_sequences` SET `next` = NEW.`id` + 16 WHERE `name` = 'idempotency_keys';
END;
