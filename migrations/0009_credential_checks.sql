CREATE TABLE `credential_checks` (
	`tenant` text PRIMARY KEY NOT NULL,
	`accepted_at` integer NOT NULL
);
