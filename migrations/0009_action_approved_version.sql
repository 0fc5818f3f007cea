-- The version of each action the owner approved, which the Secretary uses while a partner's later change of its
-- description or parameters waits for the owner (docs/decisions.md). An action on today was approved as it stands.
ALTER TABLE `actions` ADD `approved_description` text;--> statement-breakpoint
ALTER TABLE `actions` ADD `approved_parameters` text;--> statement-breakpoint
UPDATE `actions` SET `approved_description` = `description`, `approved_parameters` = `parameters` WHERE `enabled` = 1;
