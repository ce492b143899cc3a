ALTER TABLE `recent_requests` ADD `request_id` text;--> statement-breakpoint
ALTER TABLE `recent_requests` ADD `explanation` text;--> statement-breakpoint
ALTER TABLE `recent_requests` ADD `error` text;--> statement-breakpoint
ALTER TABLE `recent_requests` ADD `tenant` text;--> statement-breakpoint
CREATE INDEX `recent_requests_request_idx` ON `recent_requests` (`request_id`);