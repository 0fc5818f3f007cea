-- RFC 8707 resource indicators (docs/oauth.md, Finding the authorization server): the resource a code was requested
-- for, and the resource its tokens are bound to; null when the client named none.
ALTER TABLE `oauth_codes` ADD `resource` text;--> statement-breakpoint
ALTER TABLE `oauth_tokens` ADD `resource` text;
