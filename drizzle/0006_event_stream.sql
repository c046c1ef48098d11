CREATE TABLE `event_stream` (
	`id` text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- Made once, with the table: a mirror made again gets another, so its consumers can tell.
INSERT INTO `event_stream` (`id`) VALUES (lower(hex(randomblob(16))));
