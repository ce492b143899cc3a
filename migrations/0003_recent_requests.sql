CREATE TABLE `recent_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`tree_id` text,
	`route` text NOT NULL,
	`outcome` text NOT NULL,
	`status` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`node_hash` text,
	`template_id` text,
	`reason` text
);
--> statement-breakpoint
CREATE INDEX `recent_requests_tree_idx` ON `recent_requests` (`tree_id`,`id`);