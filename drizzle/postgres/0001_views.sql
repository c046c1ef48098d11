-- Views for analysts (docs/schema.md), the twins of drizzle/0003_views.sql: the same columns, and
-- the same values for the same data. Days are calendar days in Africa/Lagos: UTC+1 all year, no
-- daylight saving. A state code without a label in state_labels reads 'state <code>'.
-- Where SQLite and PostgreSQL differ:
-- * date(t, '+1 hour') becomes to_char(...), which, unlike ::date::text, ignores DateStyle;
-- * `a IS b` on nullable values becomes IS NOT DISTINCT FROM;
-- * julianday('now') is the statement's time, as statement_timestamp() is (now() is the transaction's);
-- * round(x, 2) becomes round_like_sqlite(x, 2), below;
-- * count(*) and sums of integers are bigint (numbers to every SQL client; the app's pool reads them
--   as JS numbers, as better-sqlite3 does);
-- * SQLite sums doubles with compensation (Kahan-Babuska-Neumaier), PostgreSQL plainly: the rounded
--   sums differ only if a group's exact sum lies within a few units in the last place of a half cent.

-- SQLite's round(x, digits) for digits from 1 to 30, to the bit: SQLite prints the double's exact
-- value to 18 or 19 significant digits, then rounds those half away from zero. PostgreSQL's
-- round(x::numeric, 2) keeps only 15 digits of x, so 2.675 (2.67499999999999982...) would read 2.68,
-- where SQLite says 2.67. test/postgres-schema.test.ts compares the two on many values.
CREATE FUNCTION round_like_sqlite(x double precision, digits integer) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  bits bigint;
  biased integer;
  shift integer;
  p integer;
  exact numeric;
BEGIN
  IF digits NOT BETWEEN 1 AND 30 THEN
    RAISE EXCEPTION 'round_like_sqlite: digits must be from 1 to 30, not %', digits;
  END IF;
  -- Zero keeps its sign, a double past 2^52 has no fraction, NaN and the infinities stay.
  IF x = 0 OR x = 'NaN' OR abs(x) >= 4503599627370496 THEN
    RETURN x;
  END IF;
  -- Rounds to a zero of x's sign.
  IF abs(x) < 1e-31 THEN
    RETURN sign(x) * 0;
  END IF;
  -- |x| = mantissa / 2^shift = mantissa * 5^shift / 10^shift, from the IEEE 754 bits (x is normal).
  bits := ('x' || encode(float8send(x), 'hex'))::bit(64)::bigint;
  biased := ((bits >> 52) & 2047)::integer;
  exact := (bits & 4503599627370495)::numeric + 4503599627370496;
  shift := 1075 - biased;
  FOR i IN 1..shift / 27 LOOP
    exact := exact * 7450580596923828125;
  END LOOP;
  FOR i IN 1..shift % 27 LOOP
    exact := exact * 5;
  END LOOP;
  exact := exact * ('1e-' || shift)::numeric;
  -- SQLite's printf scales by 10^p, with p from the binary exponent, to an 18- or 19-digit integer
  -- (sqlite3Fp2Convert10); the decimals are those digits.
  p := 17 - (((biased - 1023) * 78913) >> 18);
  exact := round(exact * ('1e' || p)::numeric) * ('1e' || -p)::numeric;
  RETURN sign(x) * round(exact, digits)::double precision;
END
$$;
--> statement-breakpoint
CREATE VIEW "bookings_v" AS
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
  b.detail_synced_at
FROM bookings b
LEFT JOIN state_labels bs ON bs.kind = 'booking_state' AND bs.code = b.booking_state
LEFT JOIN state_labels os ON os.kind = 'order_state' AND os.code = b.order_state
LEFT JOIN state_labels cs ON cs.kind = 'customer_acceptance_state' AND cs.code = b.customer_acceptance_state
WHERE b.missing_since IS NULL;
--> statement-breakpoint
CREATE VIEW "daily_bookings_v" AS
SELECT
  to_char((created_at::timestamptz AT TIME ZONE 'UTC') + interval '1 hour', 'YYYY-MM-DD') AS day,
  source_platform,
  booking_type,
  count(*) AS bookings,
  sum(CASE WHEN paid = 1 THEN 1 ELSE 0 END) AS paid_bookings,
  round_like_sqlite(sum(coalesce(total_amount, 0)), 2) AS total_amount,
  round_like_sqlite(sum(coalesce(booking_vat, 0)), 2) AS vat
FROM bookings
WHERE missing_since IS NULL
GROUP BY 1, 2, 3;
--> statement-breakpoint
CREATE VIEW "items_v" AS
SELECT
  i.booking_id,
  b.created_at,
  to_char((b.created_at::timestamptz AT TIME ZONE 'UTC') + interval '1 hour', 'YYYY-MM-DD') AS lagos_day,
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
CREATE VIEW "sync_health_v" AS
SELECT
  r.kind,
  r.stream,
  r.id AS last_run_id,
  r.status AS last_status,
  r.started_at AS last_started_at,
  r.finished_at AS last_finished_at,
  r.error AS last_error,
  (SELECT max(s.finished_at) FROM sync_runs s
    WHERE s.kind = r.kind AND s.stream IS NOT DISTINCT FROM r.stream AND s.status = 'success') AS last_success_at,
  st.checkpoint,
  round(extract(epoch FROM statement_timestamp()) - extract(epoch FROM st.checkpoint::timestamptz))::bigint
    AS checkpoint_age_seconds,
  (SELECT d.source_total - d.local_total FROM sync_runs d
    WHERE d.kind = r.kind AND d.stream IS NOT DISTINCT FROM r.stream AND d.source_total IS NOT NULL
    ORDER BY d.id DESC LIMIT 1) AS drift,
  (SELECT count(*) FROM rejected_records) AS rejects
FROM sync_runs r
LEFT JOIN sync_state st ON st.stream = r.stream
WHERE r.id = (SELECT max(x.id) FROM sync_runs x WHERE x.kind = r.kind AND x.stream IS NOT DISTINCT FROM r.stream);
