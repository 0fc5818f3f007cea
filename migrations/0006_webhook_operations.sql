-- Issue 17, webhooks a partner can operate (DESIGN.md, Beyond the spec): secret rotation (the previous secret and its
-- expiry, on endpoints and actions), endpoint health (status, why disabled, last success), the audience of each event
-- for the Events API (and an index for its type filter), an index for an endpoint's failures in a time range
-- (recover, health, the removal page) and one for an event's deliveries.
ALTER TABLE `actions` ADD `previous_secret` text;--> statement-breakpoint
ALTER TABLE `actions` ADD `previous_secret_expires_at` text;--> statement-breakpoint
ALTER TABLE `events` ADD `audience` text;--> statement-breakpoint
CREATE INDEX `events_business_type_created` ON `events` (`business_id`,`type`,`created_at`);--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `previous_secret` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `previous_secret_expires_at` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `status` text DEFAULT 'enabled' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `disabled_reason` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `last_success_at` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_status` ON `webhook_deliveries` (`endpoint_id`,`status`,`completed_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`event_id`);--> statement-breakpoint
-- intake.completed went only to the endpoints of the intake's own key or app: its existing events say so. Those of an
-- intake deleted since cannot be placed; no principal lists them ('none').
UPDATE `events` SET `audience` = coalesce(
  (SELECT CASE WHEN `i`.`api_key_id` IS NOT NULL THEN 'key:' || `i`.`api_key_id` ELSE 'app:' || `i`.`oauth_grant_id` END
   FROM `intakes` `i` WHERE `i`.`id` = json_extract(`events`.`envelope`, '$.data.intake.id')),
  'none')
WHERE `type` = 'intake.completed';
