CREATE TABLE `prune_sweep` (
	`shard` text PRIMARY KEY NOT NULL,
	`after` text DEFAULT '' NOT NULL,
	`passes` integer DEFAULT 0 NOT NULL,
	`passed_at` integer
);
