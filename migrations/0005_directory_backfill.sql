CREATE TABLE `directory_backfill` (
	`shard` text PRIMARY KEY NOT NULL,
	`after` text DEFAULT '' NOT NULL,
	`done_at` integer
);
