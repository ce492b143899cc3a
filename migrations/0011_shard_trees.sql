CREATE TABLE `shard_trees` (
	`shard` text PRIMARY KEY NOT NULL,
	`trees` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `credential_checks` ADD `provider` text;--> statement-breakpoint
INSERT INTO `shard_trees` (`shard`, `trees`) SELECT `shard`, count(*) FROM `tree_directory` GROUP BY `shard`;--> statement-breakpoint
CREATE TRIGGER `shard_trees_insert` AFTER INSERT ON `tree_directory` BEGIN
	INSERT INTO `shard_trees` (`shard`, `trees`) VALUES (NEW.`shard`, 1) ON CONFLICT (`shard`) DO UPDATE SET `trees` = `trees` + 1;
END;--> statement-breakpoint
CREATE TRIGGER `shard_trees_delete` AFTER DELETE ON `tree_directory` BEGIN
	UPDATE `shard_trees` SET `trees` = `trees` - 1 WHERE `shard` = OLD.`shard`;
END;--> statement-breakpoint
CREATE TRIGGER `shard_trees_move` AFTER UPDATE OF `shard` ON `tree_directory` WHEN NEW.`shard` IS NOT OLD.`shard` BEGIN
	UPDATE `shard_trees` SET `trees` = `trees` - 1 WHERE `shard` = OLD.`shard`;
	INSERT INTO `shard_trees` (`shard`, `trees`) VALUES (NEW.`shard`, 1) ON CONFLICT (`shard`) DO UPDATE SET `trees` = `trees` + 1;
END;
