-- A guard for optimistic concurrency inside a D1 batch (src/db/snapshot-guard.ts). Inserting 0 into the view aborts
-- the whole batch, a transaction, with "snapshot changed concurrently"; inserting 1 does nothing and stores nothing.
-- Reports of the core platform use it so that a booking or order snapshot is written, and its events emitted, only
-- when the snapshot is still the one the report read.
CREATE VIEW `snapshot_guard` AS SELECT 1 AS `current`;
--> statement-breakpoint
CREATE TRIGGER `snapshot_guard_abort` INSTEAD OF INSERT ON `snapshot_guard` WHEN NEW.`current` = 0
BEGIN
  SELECT RAISE(ABORT, 'snapshot changed concurrently');
END;
