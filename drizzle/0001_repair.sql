ALTER TABLE `sync_runs` ADD `gaps_found` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `bookings_repaired` integer DEFAULT 0 NOT NULL;