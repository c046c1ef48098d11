/** What the status page must never show: people's values as the mirror actually stores them. */
import { analyst } from "./harness.js";

/**
 * Names, phones, emails and address lines of senders and receivers of `rows` bookings that have
 * details, from the typed columns and the stored full record; empty values left out.
 */
export function personalValues(dbPath: string, rows: number): string[] {
  const db = analyst(dbPath);
  try {
    const found = db
      .prepare(`
        SELECT sender_name, sender_phone, sender_email, receiver_name, receiver_phone, receiver_email,
          detail_json ->> '$.sender.addressDetails.addressLine1',
          detail_json ->> '$.sender.addressDetails.landmark',
          detail_json ->> '$.receiver.addressDetails.addressLine1',
          detail_json ->> '$.receiver.addressDetails.landmark'
        FROM bookings WHERE detail_json IS NOT NULL ORDER BY id LIMIT ?`)
      .raw()
      .all(rows) as unknown[][];
    return [...new Set(found.flat().filter((v): v is string => typeof v === "string" && v.length >= 5))];
  } finally {
    db.close();
  }
}
