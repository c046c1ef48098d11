ALTER TABLE `bookings` ADD `details_misses` integer;--> statement-breakpoint
ALTER TABLE `bookings` ADD `details_seek_after` text;