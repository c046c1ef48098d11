CREATE TABLE "event_stream" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- Made once, with the table: a mirror made again gets another, so its consumers can tell. 32 hex
-- digits as SQLite's; md5 of random() and the clock, as gen_random_uuid() needs PostgreSQL 13.
INSERT INTO "event_stream" ("id") VALUES (md5(random()::text || clock_timestamp()::text));
