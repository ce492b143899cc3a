CREATE TABLE `upstream_responses` (
	`tenant` text NOT NULL,
	`upstream_id` text NOT NULL,
	`tree_id` text NOT NULL,
	`answer_hash` text NOT NULL,
	`call_ids` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant`, `upstream_id`)
);
--> statement-breakpoint
CREATE INDEX `upstream_responses_tree_idx` ON `upstream_responses` (`tree_id`);