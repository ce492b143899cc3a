CREATE TABLE `template_evidence` (
	`template_id` text NOT NULL,
	`answer_hash` text NOT NULL,
	`tree_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`template_id`, `answer_hash`)
);
--> statement-breakpoint
CREATE INDEX `template_evidence_answer_idx` ON `template_evidence` (`answer_hash`);