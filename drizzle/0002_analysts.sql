CREATE TABLE `booking_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`booking_id` text NOT NULL,
	`field` text NOT NULL,
	`old_value` text,
	`new_value` text,
	`observed_at` text NOT NULL,
	`run_id` integer,
	FOREIGN KEY (`booking_id`) REFERENCES `bookings`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`run_id`) REFERENCES `sync_runs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `booking_changes_booking_idx` ON `booking_changes` (`booking_id`,`observed_at`);--> statement-breakpoint
CREATE INDEX `booking_changes_field_idx` ON `booking_changes` (`field`,`observed_at`);--> statement-breakpoint
CREATE TABLE `state_labels` (
	`kind` text NOT NULL,
	`code` integer NOT NULL,
	`label` text NOT NULL,
	PRIMARY KEY(`kind`, `code`)
);
