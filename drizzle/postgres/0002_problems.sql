ALTER TABLE "bookings" ALTER COLUMN "created_at" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "bookings" ADD COLUMN "summary_problems" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "bookings" ADD COLUMN "detail_problems" text COLLATE "C";--> statement-breakpoint
-- `problems` is added at the end, as CREATE OR REPLACE VIEW requires.
CREATE OR REPLACE VIEW "bookings_v" AS
SELECT
  b.id AS booking_id,
  b.search_id,
  b.source_platform,
  b.booking_type,
  b.created_at,
  to_char((b.created_at::timestamptz AT TIME ZONE 'UTC') + interval '1 hour', 'YYYY-MM-DD') AS lagos_day,
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
