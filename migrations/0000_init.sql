CREATE TABLE `nodes` (
	`hash` text PRIMARY KEY NOT NULL,
	`parent` text NOT NULL,
	`tree_id` text NOT NULL,
	`depth` integer NOT NULL,
	`role` text NOT NULL,
	`message` text NOT NULL,
	`observations` integer DEFAULT 0 NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`finish_reason` text,
	`latency_ms` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`last_hit_at` integer
);
--> statement-breakpoint
CREATE INDEX `nodes_parent_idx` ON `nodes` (`parent`);--> statement-breakpoint
CREATE INDEX `nodes_tree_idx` ON `nodes` (`tree_id`,`depth`);--> statement-breakpoint
CREATE TABLE `trees` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`namespace` text NOT NULL,
	`model` text NOT NULL,
	`frame` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_hit_at` integer,
	`node_count` integer DEFAULT 0 NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`misses` integer DEFAULT 0 NOT NULL,
	`bypasses` integer DEFAULT 0 NOT NULL,
	`prompt_tokens_saved` integer DEFAULT 0 NOT NULL,
	`completion_tokens_saved` integer DEFAULT 0 NOT NULL,
	`latency_saved_ms` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `trees_tenant_idx` ON `trees` (`tenant`,`last_hit_at`);