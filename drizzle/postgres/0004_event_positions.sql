ALTER TABLE "booking_events" ALTER COLUMN "id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "booking_events" ALTER COLUMN "id" SET MAXVALUE 9223372036854775807;--> statement-breakpoint
ALTER TABLE "event_delivery" ALTER COLUMN "cursor" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_delivery" ALTER COLUMN "message_first" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_delivery" ALTER COLUMN "message_last" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_delivery" ALTER COLUMN "message_replay" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_replays" ALTER COLUMN "id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_replays" ALTER COLUMN "id" SET MAXVALUE 9223372036854775807;--> statement-breakpoint
ALTER TABLE "event_replays" ALTER COLUMN "from_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_replays" ALTER COLUMN "to_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "event_replays" ALTER COLUMN "next_id" SET DATA TYPE bigint;