ALTER TABLE "bookings" ADD COLUMN "details_misses" integer;--> statement-breakpoint
ALTER TABLE "bookings" ADD COLUMN "details_seek_after" text COLLATE "C";