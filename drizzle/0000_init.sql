CREATE TABLE `booking_items` (
	`booking_id` text NOT NULL,
	`package_position` integer NOT NULL,
	`position` integer NOT NULL,
	`item_id` text,
	`name` text,
	`hs_code` text,
	`quantity` real,
	`price` real,
	`exclude_packing_list` integer,
	PRIMARY KEY(`booking_id`, `package_position`, `position`),
	FOREIGN KEY (`booking_id`) REFERENCES `bookings`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `booking_items_hs_code_idx` ON `booking_items` (`hs_code`);--> statement-breakpoint
CREATE TABLE `booking_packages` (
	`booking_id` text NOT NULL,
	`position` integer NOT NULL,
	`package_id` text,
	`actual_weight` real,
	`length` real,
	`width` real,
	`height` real,
	`dimension_weight` real,
	`dimension_price` real,
	`predefined_dimension` text,
	`multiple` real,
	PRIMARY KEY(`booking_id`, `position`),
	FOREIGN KEY (`booking_id`) REFERENCES `bookings`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `bookings` (
	`id` text PRIMARY KEY NOT NULL,
	`search_id` text,
	`source_platform` text,
	`booking_type` text,
	`created_at` text NOT NULL,
	`booking_date` text,
	`paid` integer,
	`booking_state` integer,
	`order_state` integer,
	`total_amount` real,
	`weight` real,
	`number_of_packages` integer,
	`sender_name` text,
	`sender_phone` text,
	`sender_email` text,
	`sender_city` text,
	`sender_country` text,
	`sender_country_code` text,
	`receiver_name` text,
	`receiver_phone` text,
	`receiver_email` text,
	`receiver_city` text,
	`receiver_country` text,
	`receiver_country_code` text,
	`summary_json` text,
	`first_seen_at` text NOT NULL,
	`summary_synced_at` text NOT NULL,
	`detail_json` text,
	`detail_synced_at` text,
	`remote_updated_at` text,
	`sub_total` real,
	`booking_vat` real,
	`insurance_type` text,
	`insurance_fee` real,
	`insured_value` real,
	`package_insurance` text,
	`fuel_surcharge_amount` real,
	`packaging_fee_amount` real,
	`delivery_type` text,
	`delivery_mode` text,
	`service_type` text,
	`carrier` text,
	`shipment_rate` text,
	`branch_name` text,
	`served_by` text,
	`collection_type` text,
	`pickup_date` text,
	`pickup_time_from` text,
	`pickup_time_to` text,
	`promo_code` text,
	`customer_acceptance_state` integer,
	`source_name` text,
	`source_branch` text,
	`listed_by_run` integer,
	`missing_since` text,
	CONSTRAINT "bookings_booking_type_check" CHECK("bookings"."booking_type" IN ('IN', 'LC'))
);
--> statement-breakpoint
CREATE INDEX `bookings_created_at_idx` ON `bookings` (`created_at`);--> statement-breakpoint
CREATE INDEX `bookings_source_platform_idx` ON `bookings` (`source_platform`);--> statement-breakpoint
CREATE INDEX `bookings_paid_state_idx` ON `bookings` (`paid`,`booking_state`);--> statement-breakpoint
CREATE INDEX `bookings_booking_type_idx` ON `bookings` (`booking_type`);--> statement-breakpoint
CREATE INDEX `bookings_needing_details_idx` ON `bookings` (`created_at`) WHERE detail_synced_at IS NULL OR summary_synced_at > detail_synced_at;--> statement-breakpoint
CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`pid` integer NOT NULL,
	`hostname` text NOT NULL,
	`acquired_at` text NOT NULL,
	`heartbeat_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rejected_records` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer,
	`endpoint` text NOT NULL,
	`booking_id` text,
	`created_at` text,
	`reason` text NOT NULL,
	`raw_json` text NOT NULL,
	`raw_sha256` text NOT NULL,
	`first_seen_at` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `sync_runs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rejected_records_raw_sha256_unique` ON `rejected_records` (`raw_sha256`);--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`stream` text,
	`started_at` text NOT NULL,
	`finished_at` text,
	`status` text NOT NULL,
	`pages` integer DEFAULT 0 NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`retries` integer DEFAULT 0 NOT NULL,
	`bookings_new` integer DEFAULT 0 NOT NULL,
	`bookings_updated` integer DEFAULT 0 NOT NULL,
	`bookings_unchanged` integer DEFAULT 0 NOT NULL,
	`rejects` integer DEFAULT 0 NOT NULL,
	`checkpoint_before` text,
	`checkpoint_after` text,
	`error` text,
	`source_total` integer,
	`local_total` integer
);
--> statement-breakpoint
CREATE INDEX `sync_runs_kind_idx` ON `sync_runs` (`kind`,`id`);--> statement-breakpoint
CREATE TABLE `sync_state` (
	`stream` text PRIMARY KEY NOT NULL,
	`checkpoint` text,
	`progress_json` text,
	`updated_at` text NOT NULL
);
