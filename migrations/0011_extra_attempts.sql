-- Redeliver and recover make one more attempt of the same delivery (docs/webhooks.md, Deliveries, redelivery and
-- recovery): the attempt owed outside the retry schedule, and the index the outbox sweep finds the lost ones by.
ALTER TABLE `webhook_deliveries` ADD `extra_attempt_at` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_extra_owed` ON `webhook_deliveries` (`extra_attempt_at`) WHERE "webhook_deliveries"."extra_attempt_at" is not null;