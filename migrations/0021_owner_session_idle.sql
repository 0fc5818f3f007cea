-- An owner session unused for 30 minutes ends (docs/architecture.md, Sign-in): its last use, recorded at most every
-- 5 minutes. Null until the first record, when the sign-in (`created_at`) is the last use.
ALTER TABLE `owner_sessions` ADD `last_used_at` text;
