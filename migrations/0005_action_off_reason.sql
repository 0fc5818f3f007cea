-- Issue 15, the overview: why an action that was on is off ("owner" or "changed" by a partner's new url). Existing
-- actions that are off get null, as if never switched on: the overview lists them for the owner's review, the safe side.
ALTER TABLE `actions` ADD `off_reason` text;