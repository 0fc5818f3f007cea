-- An app endpoint's deliveries across the businesses of a shard, newest first, by one index (docs/scaling.md, An app's
-- history across shards): each delivery names its endpoint's app endpoint.
ALTER TABLE `webhook_deliveries` ADD `app_endpoint_id` integer;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_app_endpoint` ON `webhook_deliveries` (`app_endpoint_id`,`id`);--> statement-breakpoint
-- The deliveries written before: their endpoint's, for the copies of an app endpoint only. Run again, it fills only
-- what the version before wrote meanwhile (docs/scaling.md, An app's history across shards).
UPDATE `webhook_deliveries` SET `app_endpoint_id` = (
	SELECT `app_endpoint_id` FROM `webhook_endpoints` WHERE `webhook_endpoints`.`id` = `webhook_deliveries`.`endpoint_id`
) WHERE `app_endpoint_id` IS NULL
	AND `endpoint_id` IN (SELECT `id` FROM `webhook_endpoints` WHERE `app_endpoint_id` IS NOT NULL);
