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
  b.detail_synced_at
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
