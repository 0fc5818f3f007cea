-- The sandbox businesses listed in the directory, counted at each sandbox creation against the cap of those in use
-- at once (docs/guides/sandbox.md, Budgets): a partial index, so the count reads the sandboxes' entries only.
CREATE INDEX `business_shards_sandbox` ON `business_shards` (`sandbox`) WHERE "business_shards"."sandbox" = 1;
