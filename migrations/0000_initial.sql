CREATE TABLE `action_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`action_id` integer NOT NULL,
	`business_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`message_id` text NOT NULL,
	`channel` text NOT NULL,
	`status` text NOT NULL,
	`arguments` text NOT NULL,
	`http_status` integer,
	`error` text,
	`duration_ms` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`action_id`) REFERENCES `actions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `action_calls_action` ON `action_calls` (`action_id`,`id`);--> statement-breakpoint
CREATE INDEX `action_calls_business_message` ON `action_calls` (`business_id`,`message_id`);--> statement-breakpoint
CREATE TABLE `actions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`name` text NOT NULL,
	`title` text NOT NULL,
	`description` text NOT NULL,
	`url` text NOT NULL,
	`parameters` text NOT NULL,
	`secret` text NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`api_key_id` integer,
	`oauth_grant_id` integer,
	`failure_count` integer DEFAULT 0 NOT NULL,
	`last_called_at` text,
	`last_success_at` text,
	`last_failure_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `actions_business_name` ON `actions` (`business_id`,`name`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`display_prefix` text NOT NULL,
	`label` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_business_revoked` ON `api_keys` (`business_id`,`revoked_at`);--> statement-breakpoint
CREATE TABLE `businesses` (
	`id` text PRIMARY KEY NOT NULL,
	`handle` text NOT NULL,
	`name` text NOT NULL,
	`currency` text NOT NULL,
	`country` text NOT NULL,
	`time_zone` text NOT NULL,
	`plan` text NOT NULL,
	`plan_active` integer NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `businesses_handle_unique` ON `businesses` (`handle`);--> statement-breakpoint
CREATE TABLE `owner_sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`token_hash` text NOT NULL,
	`csrf_secret` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `owners`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `owner_sessions_token_hash` ON `owner_sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `owner_sessions_owner` ON `owner_sessions` (`owner_id`);--> statement-breakpoint
CREATE TABLE `owners` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `owners_business_id_unique` ON `owners` (`business_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `owners_email_unique` ON `owners` (`email`);--> statement-breakpoint
CREATE TABLE `bookings` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `bookings_business_date` ON `bookings` (`business_id`,`date`,`time`,`id`);--> statement-breakpoint
CREATE INDEX `bookings_business_status_date` ON `bookings` (`business_id`,`status`,`date`,`time`,`id`);--> statement-breakpoint
CREATE TABLE `orders` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `orders_business_created` ON `orders` (`business_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_business_status_created` ON `orders` (`business_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `intake_responses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`intake_id` integer NOT NULL,
	`business_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`channel` text NOT NULL,
	`run_id` text NOT NULL,
	`answers` text NOT NULL,
	`status` text NOT NULL,
	`completed_at` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`intake_id`) REFERENCES `intakes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `intake_responses_intake` ON `intake_responses` (`intake_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `intake_responses_run` ON `intake_responses` (`run_id`);--> statement-breakpoint
CREATE TABLE `intakes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`name` text NOT NULL,
	`title` text NOT NULL,
	`description` text NOT NULL,
	`fields` text NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`approved_version` integer,
	`approved_content` text,
	`api_key_id` integer,
	`oauth_grant_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `intakes_business_name` ON `intakes` (`business_id`,`name`);--> statement-breakpoint
CREATE INDEX `intakes_api_key` ON `intakes` (`api_key_id`);--> statement-breakpoint
CREATE INDEX `intakes_oauth_grant` ON `intakes` (`oauth_grant_id`);--> statement-breakpoint
CREATE TABLE `knowledge_items` (
	`business_id` text NOT NULL,
	`key` text NOT NULL,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`chars` integer NOT NULL,
	`api_key_id` integer,
	`oauth_grant_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`business_id`, `key`),
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `owner_knowledge_sources` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`kind` text NOT NULL,
	`title` text NOT NULL,
	`location` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `owner_knowledge_sources_business` ON `owner_knowledge_sources` (`business_id`);--> statement-breakpoint
CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`client_name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`token_endpoint_auth_method` text NOT NULL,
	`secret_hash` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oauth_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`grant_id` integer NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_codes_grant` ON `oauth_codes` (`grant_id`);--> statement-breakpoint
CREATE TABLE `oauth_grants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`client_id` text NOT NULL,
	`business_id` text NOT NULL,
	`scope` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_business` ON `oauth_grants` (`business_id`,`revoked_at`);--> statement-breakpoint
CREATE INDEX `oauth_grants_client` ON `oauth_grants` (`client_id`);--> statement-breakpoint
CREATE TABLE `oauth_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`grant_id` integer NOT NULL,
	`code_hash` text,
	`expires_at` text NOT NULL,
	`rotated_at` text,
	`revoked_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_tokens_grant` ON `oauth_tokens` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth_tokens_code` ON `oauth_tokens` (`code_hash`);--> statement-breakpoint
CREATE TABLE `delivery_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`attempted_at` text NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `delivery_attempts_delivery` ON `delivery_attempts` (`delivery_id`,`id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`business_id` text NOT NULL,
	`type` text NOT NULL,
	`envelope` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_business_created` ON `events` (`business_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` integer NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`enqueued_at` text,
	`lease_until` text,
	`completed_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_status_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint` ON `webhook_deliveries` (`endpoint_id`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_unenqueued` ON `webhook_deliveries` (`created_at`) WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."enqueued_at" is null;--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`business_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text NOT NULL,
	`secret` text NOT NULL,
	`api_key_id` integer,
	`oauth_grant_id` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`business_id`) REFERENCES `businesses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_business` ON `webhook_endpoints` (`business_id`);