CREATE TABLE "booking_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "booking_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"type" text COLLATE "C" NOT NULL,
	"booking_id" text COLLATE "C" NOT NULL,
	"at" text COLLATE "C" NOT NULL,
	"run_id" integer,
	"data" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_delivery" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"endpoint" text COLLATE "C",
	"cursor" integer DEFAULT 0 NOT NULL,
	"message_id" text COLLATE "C",
	"message_first" integer,
	"message_last" integer,
	"message_replay" integer,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" text COLLATE "C",
	"last_error" text COLLATE "C",
	"last_error_at" text COLLATE "C",
	"last_delivered_at" text COLLATE "C",
	"dropped" integer DEFAULT 0 NOT NULL,
	"dropped_at" text COLLATE "C"
);
--> statement-breakpoint
CREATE TABLE "event_replays" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "event_replays_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"from_id" integer NOT NULL,
	"to_id" integer NOT NULL,
	"next_id" integer NOT NULL,
	"requested_at" text COLLATE "C" NOT NULL,
	"finished_at" text COLLATE "C"
);
--> statement-breakpoint
ALTER TABLE "booking_events" ADD CONSTRAINT "booking_events_run_id_sync_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."sync_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "booking_events_at_idx" ON "booking_events" USING btree ("at");