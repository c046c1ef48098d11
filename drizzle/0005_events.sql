CREATE TABLE `booking_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`booking_id` text NOT NULL,
	`at` text NOT NULL,
	`run_id` integer,
	`data` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `sync_runs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `booking_events_at_idx` ON `booking_events` (`at`);--> statement-breakpoint
CREATE TABLE `event_delivery` (
	`name` text PRIMARY KEY NOT NULL,
	`endpoint` text,
	`cursor` integer DEFAULT 0 NOT NULL,
	`message_id` text,
	`message_first` integer,
	`message_last` integer,
	`message_replay` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`last_error` text,
	`last_error_at` text,
	`last_delivered_at` text,
	`dropped` integer DEFAULT 0 NOT NULL,
	`dropped_at` text
);
--> statement-breakpoint
CREATE TABLE `event_replays` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`from_id` integer NOT NULL,
	`to_id` integer NOT NULL,
	`next_id` integer NOT NULL,
	`requested_at` text NOT NULL,
	`finished_at` text
);
