-- Issue 20, item 1: retention in the cron (DESIGN.md, Operations; src/domain/retention.ts). Each kind the cron
-- deletes is found by a range of one of these indexes, so a run reads about what it deletes, never a whole table.
ALTER TABLE `action_calls` ADD `superseded` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `action_calls_superseded_created` ON `action_calls` (`created_at`) WHERE "action_calls"."superseded" = 1;--> statement-breakpoint
CREATE INDEX `owner_sessions_expires` ON `owner_sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE INDEX `oauth_codes_expires` ON `oauth_codes` (`expires_at`);--> statement-breakpoint
CREATE INDEX `oauth_tokens_expires` ON `oauth_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `oauth_tokens_revoked` ON `oauth_tokens` (`revoked_at`) WHERE "oauth_tokens"."revoked_at" is not null;--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);
--> statement-breakpoint
-- An action's calls after 30 days go, except its 10 most recent (spec: `GET /actions/{id}` shows them). A call is
-- marked `superseded` when it leaves the 10 most recent: the trigger marks the 11th most recent as each call is
-- inserted, in the insert's own statement, so concurrent calls cannot skip one. Kept calls stay out of the
-- retention's index, so an action left idle for years costs its runs nothing.
UPDATE `action_calls` SET `superseded` = 1
WHERE `id` < coalesce((
  SELECT `newer`.`id` FROM `action_calls` AS `newer`
  WHERE `newer`.`action_id` = `action_calls`.`action_id`
  ORDER BY `newer`.`id` DESC LIMIT 1 OFFSET 9
), 0);
--> statement-breakpoint
CREATE TRIGGER `action_calls_supersede` AFTER INSERT ON `action_calls`
BEGIN
  UPDATE `action_calls` SET `superseded` = 1
  WHERE `superseded` = 0 AND `id` = (
    SELECT `id` FROM `action_calls` WHERE `action_id` = NEW.`action_id` ORDER BY `id` DESC LIMIT 1 OFFSET 10
  );
END;
