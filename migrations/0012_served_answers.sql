CREATE TABLE `served_answers` (
	`tenant` text NOT NULL,
	`tree_id` text NOT NULL,
	`answer_hash` text NOT NULL,
	`parent` text NOT NULL,
	`base` text NOT NULL,
	`tail` text NOT NULL,
	`answer` text NOT NULL,
	`links` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant`, `tree_id`, `answer_hash`)
);
--> statement-breakpoint
CREATE INDEX `served_answers_tree_idx` ON `served_answers` (`tree_id`,`created_at`);