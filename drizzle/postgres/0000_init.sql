CREATE TABLE "booking_changes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "booking_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"booking_id" text COLLATE "C" NOT NULL,
	"field" text COLLATE "C" NOT NULL,
	"old_value" text COLLATE "C",
	"new_value" text COLLATE "C",
	"observed_at" text COLLATE "C" NOT NULL,
	"run_id" integer
);
--> statement-breakpoint
CREATE TABLE "booking_items" (
	"booking_id" text COLLATE "C" NOT NULL,
	"package_position" integer NOT NULL,
	"position" integer NOT NULL,
	"item_id" text COLLATE "C",
	"name" text COLLATE "C",
	"hs_code" text COLLATE "C",
	"quantity" double precision,
	"price" double precision,
	"exclude_packing_list" integer,
	CONSTRAINT "booking_items_booking_id_package_position_position_pk" PRIMARY KEY("booking_id","package_position","position")
);
--> statement-breakpoint
CREATE TABLE "booking_packages" (
	"booking_id" text COLLATE "C" NOT NULL,
	"position" integer NOT NULL,
	"package_id" text COLLATE "C",
	"actual_weight" double precision,
	"length" double precision,
	"width" double precision,
	"height" double precision,
	"dimension_weight" double precision,
	"dimension_price" double precision,
	"predefined_dimension" text COLLATE "C",
	"multiple" double precision,
	CONSTRAINT "booking_packages_booking_id_position_pk" PRIMARY KEY("booking_id","position")
);
--> statement-breakpoint
CREATE TABLE "bookings" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"search_id" text COLLATE "C",
	"source_platform" text COLLATE "C",
	"booking_type" text COLLATE "C",
	"created_at" text COLLATE "C" NOT NULL,
	"booking_date" text COLLATE "C",
	"paid" integer,
	"booking_state" bigint,
	"order_state" bigint,
	"total_amount" double precision,
	"weight" double precision,
	"number_of_packages" bigint,
	"sender_name" text COLLATE "C",
	"sender_phone" text COLLATE "C",
	"sender_email" text COLLATE "C",
	"sender_city" text COLLATE "C",
	"sender_country" text COLLATE "C",
	"sender_country_code" text COLLATE "C",
	"receiver_name" text COLLATE "C",
	"receiver_phone" text COLLATE "C",
	"receiver_email" text COLLATE "C",
	"receiver_city" text COLLATE "C",
	"receiver_country" text COLLATE "C",
	"receiver_country_code" text COLLATE "C",
	"summary_json" text COLLATE "C",
	"first_seen_at" text COLLATE "C" NOT NULL,
	"summary_synced_at" text COLLATE "C" NOT NULL,
	"detail_json" text COLLATE "C",
	"detail_synced_at" text COLLATE "C",
	"remote_updated_at" text COLLATE "C",
	"sub_total" double precision,
	"booking_vat" double precision,
	"insurance_type" text COLLATE "C",
	"insurance_fee" double precision,
	"insured_value" double precision,
	"package_insurance" text COLLATE "C",
	"fuel_surcharge_amount" double precision,
	"packaging_fee_amount" double precision,
	"delivery_type" text COLLATE "C",
	"delivery_mode" text COLLATE "C",
	"service_type" text COLLATE "C",
	"carrier" text COLLATE "C",
	"shipment_rate" text COLLATE "C",
	"branch_name" text COLLATE "C",
	"served_by" text COLLATE "C",
	"collection_type" text COLLATE "C",
	"pickup_date" text COLLATE "C",
	"pickup_time_from" text COLLATE "C",
	"pickup_time_to" text COLLATE "C",
	"promo_code" text COLLATE "C",
	"customer_acceptance_state" bigint,
	"source_name" text COLLATE "C",
	"source_branch" text COLLATE "C",
	"listed_by_run" integer,
	"missing_since" text COLLATE "C",
	CONSTRAINT "bookings_booking_type_check" CHECK ("bookings"."booking_type" IN ('IN', 'LC'))
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"holder" text COLLATE "C" NOT NULL,
	"pid" integer NOT NULL,
	"hostname" text COLLATE "C" NOT NULL,
	"acquired_at" text COLLATE "C" NOT NULL,
	"heartbeat_at" text COLLATE "C" NOT NULL,
	"expires_at" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rejected_records" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "rejected_records_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"run_id" integer,
	"endpoint" text COLLATE "C" NOT NULL,
	"booking_id" text COLLATE "C",
	"created_at" text COLLATE "C",
	"reason" text COLLATE "C" NOT NULL,
	"raw_json" text COLLATE "C" NOT NULL,
	"raw_sha256" text COLLATE "C" NOT NULL,
	"first_seen_at" text COLLATE "C" NOT NULL,
	CONSTRAINT "rejected_records_raw_sha256_unique" UNIQUE("raw_sha256")
);
--> statement-breakpoint
CREATE TABLE "state_labels" (
	"kind" text COLLATE "C" NOT NULL,
	"code" bigint NOT NULL,
	"label" text COLLATE "C" NOT NULL,
	CONSTRAINT "state_labels_kind_code_pk" PRIMARY KEY("kind","code")
);
--> statement-breakpoint
CREATE TABLE "sync_runs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync_runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"kind" text COLLATE "C" NOT NULL,
	"stream" text COLLATE "C",
	"started_at" text COLLATE "C" NOT NULL,
	"finished_at" text COLLATE "C",
	"status" text COLLATE "C" NOT NULL,
	"pages" integer DEFAULT 0 NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"retries" integer DEFAULT 0 NOT NULL,
	"bookings_new" integer DEFAULT 0 NOT NULL,
	"bookings_updated" integer DEFAULT 0 NOT NULL,
	"bookings_unchanged" integer DEFAULT 0 NOT NULL,
	"rejects" integer DEFAULT 0 NOT NULL,
	"checkpoint_before" text COLLATE "C",
	"checkpoint_after" text COLLATE "C",
	"error" text COLLATE "C",
	"source_total" bigint,
	"local_total" bigint,
	"gaps_found" integer DEFAULT 0 NOT NULL,
	"bookings_repaired" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sync_state" (
	"stream" text COLLATE "C" PRIMARY KEY NOT NULL,
	"checkpoint" text COLLATE "C",
	"progress_json" text COLLATE "C",
	"updated_at" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "booking_changes" ADD CONSTRAINT "booking_changes_booking_id_bookings_id_fk" FOREIGN KEY ("booking_id") REFERENCES "public"."bookings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "booking_changes" ADD CONSTRAINT "booking_changes_run_id_sync_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."sync_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "booking_items" ADD CONSTRAINT "booking_items_booking_id_bookings_id_fk" FOREIGN KEY ("booking_id") REFERENCES "public"."bookings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "booking_packages" ADD CONSTRAINT "booking_packages_booking_id_bookings_id_fk" FOREIGN KEY ("booking_id") REFERENCES "public"."bookings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rejected_records" ADD CONSTRAINT "rejected_records_run_id_sync_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."sync_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "booking_changes_booking_idx" ON "booking_changes" USING btree ("booking_id","observed_at");--> statement-breakpoint
CREATE INDEX "booking_changes_field_idx" ON "booking_changes" USING btree ("field","observed_at");--> statement-breakpoint
CREATE INDEX "booking_items_hs_code_idx" ON "booking_items" USING hash ("hs_code");--> statement-breakpoint
CREATE INDEX "bookings_created_at_idx" ON "bookings" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "bookings_source_platform_idx" ON "bookings" USING hash ("source_platform");--> statement-breakpoint
CREATE INDEX "bookings_paid_state_idx" ON "bookings" USING btree ("paid","booking_state");--> statement-breakpoint
CREATE INDEX "bookings_booking_type_idx" ON "bookings" USING btree ("booking_type");--> statement-breakpoint
CREATE INDEX "bookings_needing_details_idx" ON "bookings" USING btree ("created_at") WHERE detail_synced_at IS NULL OR summary_synced_at > detail_synced_at;--> statement-breakpoint
CREATE INDEX "sync_runs_kind_idx" ON "sync_runs" USING btree ("kind","id");