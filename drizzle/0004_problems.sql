-- Views name `bookings`, and SQLite refuses to rename a table while a view names one that is gone:
-- they are dropped for the rebuild and made again, `bookings_v` with `problems`.
DROP VIEW IF EXISTS `bookings_v`;--> statement-breakpoint
DROP VIEW IF EXISTS `daily_bookings_v`;--> statement-breakpoint
DROP VIEW IF EXISTS `items_v`;--> statement-breakpoint
DROP VIEW IF EXISTS `sync_health_v`;--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_bookings` (
	`id` text PRIMARY KEY NOT NULL,
	`search_id` text,
	`source_platform` text,
	`booking_type` text,
	`created_at` text,
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
	`summary_problems` text,
	`detail_problems` text,
	CONSTRAINT "bookings_booking_type_check" CHECK("booking_type" IN ('IN', 'LC'))
);
--> statement-breakpoint
INSERT INTO `__new_bookings`("id", "search_id", "source_platform", "booking_type", "created_at", "booking_date", "paid", "booking_state", "order_state", "total_amount", "weight", "number_of_packages", "sender_name", "sender_phone", "sender_email", "sender_city", "sender_country", "sender_country_code", "receiver_name", "receiver_phone", "receiver_email", "receiver_city", "receiver_country", "receiver_country_code", "summary_json", "first_seen_at", "summary_synced_at", "detail_json", "detail_synced_at", "remote_updated_at", "sub_total", "booking_vat", "insurance_type", "insurance_fee", "insured_value", "package_insurance", "fuel_surcharge_amount", "packaging_fee_amount", "delivery_type", "delivery_mode", "service_type", "carrier", "shipment_rate", "branch_name", "served_by", "collection_type", "pickup_date", "pickup_time_from", "pickup_time_to", "promo_code", "customer_acceptance_state", "source_name", "source_branch", "listed_by_run", "missing_since") SELECT "id", "search_id", "source_platform", "booking_type", "created_at", "booking_date", "paid", "booking_state", "order_state", "total_amount", "weight", "number_of_packages", "sender_name", "sender_phone", "sender_email", "sender_city", "sender_country", "sender_country_code", "receiver_name", "receiver_phone", "receiver_email", "receiver_city", "receiver_country", "receiver_country_code", "summary_json", "first_seen_at", "summary_synced_at", "detail_json", "detail_synced_at", "remote_updated_at", "sub_total", "booking_vat", "insurance_type", "insurance_fee", "insured_value", "package_insurance", "fuel_surcharge_amount", "packaging_fee_amount", "delivery_type", "delivery_mode", "service_type", "carrier", "shipment_rate", "branch_name", "served_by", "collection_type", "pickup_date", "pickup_time_from", "pickup_time_to", "promo_code", "customer_acceptance_state", "source_name", "source_branch", "listed_by_run", "missing_since" FROM `bookings`;--> statement-breakpoint
DROP TABLE `bookings`;--> statement-breakpoint
ALTER TABLE `__new_bookings` RENAME TO `bookings`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `bookings_created_at_idx` ON `bookings` (`created_at`);--> statement-breakpoint
CREATE INDEX `bookings_source_platform_idx` ON `bookings` (`source_platform`);--> statement-breakpoint
CREATE INDEX `bookings_paid_state_idx` ON `bookings` (`paid`,`booking_state`);--> statement-breakpoint
CREATE INDEX `bookings_booking_type_idx` ON `bookings` (`booking_type`);--> statement-breakpoint
CREATE INDEX `bookings_needing_details_idx` ON `bookings` (`created_at`) WHERE detail_synced_at IS NULL OR summary_synced_at > detail_synced_at;--> statement-breakpoint
-- Views for analysts (docs/schema.md). Days are calendar days in Africa/Lagos: UTC+1 all year, no
-- daylight saving. A state code without a label in state_labels reads 'state <code>'.
CREATE VIEW `bookings_v` AS
SELECT
  b.id AS booking_id,
  b.search_id,
  b.source_platform,
  b.booking_type,
  b.created_at,
  date(b.created_at, '+1 hour') AS lagos_day,
  b.booking_date,
  b.paid,
  CASE b.paid WHEN 1 THEN 'paid' WHEN 0 THEN 'unpaid' END AS paid_label,
  b.booking_state,
  CASE WHEN b.booking_state IS NOT NULL THEN coalesce(bs.label, 'state ' || b.booking_state) END AS booking_state_label,
  b.order_state,
  CASE WHEN b.order_state IS NOT NULL THEN coalesce(os.label, 'state ' || b.order_state) END AS order_state_label,
  b.customer_acceptance_state,
  CASE WHEN b.customer_acceptance_state IS NOT NULL
    THEN coalesce(cs.label, 'state ' || b.customer_acceptance_state) END AS customer_acceptance_state_label,
  b.total_amount,
  b.sub_total,
  b.booking_vat AS vat,
  b.insurance_fee,
  b.fuel_surcharge_amount,
  b.packaging_fee_amount,
  b.weight,
  b.number_of_packages,
  b.carrier,
  b.service_type,
  b.delivery_type,
  b.delivery_mode,
  b.shipment_rate,
  b.branch_name,
  b.sender_city,
  b.sender_country_code,
  b.receiver_city,
  b.receiver_country_code,
  CASE WHEN b.detail_synced_at IS NOT NULL THEN 1 ELSE 0 END AS has_details,
  b.first_seen_at,
  b.summary_synced_at,
  b.detail_synced_at,
  CASE WHEN b.summary_problems IS NULL THEN b.detail_problems
    WHEN b.detail_problems IS NULL THEN b.summary_problems
    ELSE b.summary_problems || '; ' || b.detail_problems END AS problems
FROM bookings b
LEFT JOIN state_labels bs ON bs.kind = 'booking_state' AND bs.code = b.booking_state
LEFT JOIN state_labels os ON os.kind = 'order_state' AND os.code = b.order_state
LEFT JOIN state_labels cs ON cs.kind = 'customer_acceptance_state' AND cs.code = b.customer_acceptance_state
WHERE b.missing_since IS NULL;
--> statement-breakpoint
CREATE VIEW `daily_bookings_v` AS
SELECT
  date(created_at, '+1 hour') AS day,
  source_platform,
  booking_type,
  count(*) AS bookings,
  sum(CASE WHEN paid = 1 THEN 1 ELSE 0 END) AS paid_bookings,
  round(sum(coalesce(total_amount, 0)), 2) AS total_amount,
  round(sum(coalesce(booking_vat, 0)), 2) AS vat
FROM bookings
WHERE missing_since IS NULL
GROUP BY 1, 2, 3;
--> statement-breakpoint
CREATE VIEW `items_v` AS
SELECT
  i.booking_id,
  b.created_at,
  date(b.created_at, '+1 hour') AS lagos_day,
  b.source_platform,
  b.booking_type,
  i.package_position,
  p.package_id,
  i.position AS item_position,
  i.item_id,
  i.name,
  i.hs_code,
  i.quantity,
  i.price,
  i.quantity * i.price AS line_value,
  i.exclude_packing_list
FROM booking_items i
JOIN bookings b ON b.id = i.booking_id
LEFT JOIN booking_packages p ON p.booking_id = i.booking_id AND p.position = i.package_position
WHERE b.missing_since IS NULL;
--> statement-breakpoint
CREATE VIEW `sync_health_v` AS
SELECT
  r.kind,
  r.stream,
  r.id AS last_run_id,
  r.status AS last_status,
  r.started_at AS last_started_at,
  r.finished_at AS last_finished_at,
  r.error AS last_error,
  (SELECT max(s.finished_at) FROM sync_runs s
    WHERE s.kind = r.kind AND s.stream IS r.stream AND s.status = 'success') AS last_success_at,
  st.checkpoint,
  CAST(round((julianday('now') - julianday(st.checkpoint)) * 86400) AS INTEGER) AS checkpoint_age_seconds,
  (SELECT d.source_total - d.local_total FROM sync_runs d
    WHERE d.kind = r.kind AND d.stream IS r.stream AND d.source_total IS NOT NULL
    ORDER BY d.id DESC LIMIT 1) AS drift,
  (SELECT count(*) FROM rejected_records) AS rejects
FROM sync_runs r
LEFT JOIN sync_state st ON st.stream = r.stream
WHERE r.id = (SELECT max(x.id) FROM sync_runs x WHERE x.kind = r.kind AND x.stream IS r.stream);
