-- Client ID metadata documents (docs/oauth.md, Client ID metadata documents): a client whose id is the URL of its
-- document keeps when the document was last read and until when that reading is fresh; null for a registered client.
ALTER TABLE `oauth_clients` ADD `metadata_fetched_at` text;--> statement-breakpoint
ALTER TABLE `oauth_clients` ADD `metadata_fresh_until` text;