CREATE TABLE `tree_directory` (
	`tree_id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`namespace` text NOT NULL,
	`shard` text NOT NULL,
	`moving_to` text,
	`draining_from` text,
	`created_at` integer NOT NULL,
	`moved_at` integer
);
--> statement-breakpoint
CREATE INDEX `tree_directory_shard_idx` ON `tree_directory` (`shard`);--> statement-breakpoint
CREATE INDEX `tree_directory_tenant_idx` ON `tree_directory` (`tenant`,`shard`);