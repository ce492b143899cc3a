CREATE TABLE `template_observations` (
	`answer_hash` text PRIMARY KEY NOT NULL,
	`tree_id` text NOT NULL,
	`shape_key` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `template_observations_shape_idx` ON `template_observations` (`shape_key`,`created_at`);--> statement-breakpoint
CREATE TABLE `templates` (
	`id` text PRIMARY KEY NOT NULL,
	`tree_id` text NOT NULL,
	`lookup_key` text NOT NULL,
	`anchor_depth` integer NOT NULL,
	`pattern` text NOT NULL,
	`state` text NOT NULL,
	`bindings` integer DEFAULT 0 NOT NULL,
	`refuted` integer DEFAULT 0 NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `templates_lookup_idx` ON `templates` (`lookup_key`);--> statement-breakpoint
CREATE INDEX `templates_tree_idx` ON `templates` (`tree_id`);