/**
 * The personal-data policy on its own and where it applies (`toFeedRows`, `toDetailRows`): which
 * fields it replaces, how values are normalised before hashing, that everything else is kept, and
 * that rejects are covered too. The end-to-end proof, the database files grepped after the CLI
 * ran, is in personal-data.e2e.test.ts.
 */
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toDetailRows, toFeedRows } from "../src/store/mirror/page-rows.js";
import { hasher, PERSONAL_PATHS, personalDataPolicy } from "../src/store/personal-data.js";
import { DETAIL_COLUMNS, SUMMARY_COLUMNS } from "../src/store/rows.js";
import type { Reject } from "../src/sync/ports.js";
import { feedBatch, fullRaw, listBatch, okFull, okSummary, summaryRaw } from "./support/store-fixtures.js";

const KEY = "0123456789abcdef-test-key";
const T = "2025-02-01T00:00:00.000Z";

/** A full record with every personal field of the contract, and a field no schema knows. */
function personRaw(i: number): Record<string, unknown> {
  return fullRaw(i, {
    sender: {
      contact: { name: "Chidi Eze", phone: "+2348031234567", email: "Chidi@Example.com", owner: "u1" },
      addressDetails: {
        addressLine1: "12 Allen Avenue",
        apartmentNumber: "Flat 3",
        city: "Lagos",
        state: "Lagos",
        country: "Nigeria",
        stateOrProvinceCode: "LA",
        countryCode: "NG",
        postalCode: "100001",
        landmark: "Opposite the mall",
        streetLines: ["12 Allen Avenue", "Opposite the mall"],
      },
    },
    payments: { transaction: { method: "CARD" }, accountNumber: "0123456789", customerId: "c-77" },
    partnerOnlyField: { kept: true },
  });
}

/** Where a row of `toFeedRows` (`toDetailRows`) holds its JSON: after the id, the type and the columns. */
const FEED_JSON = 2 + SUMMARY_COLUMNS.length;
const DETAIL_JSON = FEED_JSON + DETAIL_COLUMNS.length;

const get = (obj: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);

describe("personalDataPolicy", () => {
  it("keep has no policy: records are stored as received at no extra cost", () => {
    expect(personalDataPolicy("keep")).toBeUndefined();
    const raw = { ...summaryRaw(1), unnamed: "kept" };
    const rows = toFeedRows(feedBatch([okSummary(raw)], T));
    expect(rows.rows[0]?.[FEED_JSON]).toBe(JSON.stringify(raw));
  });

  it("lists the personal paths: contact and address lines of both parties, and the payer's ids", () => {
    expect(PERSONAL_PATHS).toEqual([
      "sender.contact.name",
      "sender.contact.phone",
      "sender.contact.email",
      "sender.contact.owner",
      "sender.addressDetails.addressLine1",
      "sender.addressDetails.apartmentNumber",
      "sender.addressDetails.landmark",
      "sender.addressDetails.streetLines",
      "sender.addressDetails.postalCode",
      "receiver.contact.name",
      "receiver.contact.phone",
      "receiver.contact.email",
      "receiver.contact.owner",
      "receiver.addressDetails.addressLine1",
      "receiver.addressDetails.apartmentNumber",
      "receiver.addressDetails.landmark",
      "receiver.addressDetails.streetLines",
      "receiver.addressDetails.postalCode",
      "payments.accountNumber",
      "payments.customerId",
    ]);
  });

  it("hash replaces each personal value in the JSON and keeps every other field, in order", () => {
    const policy = personalDataPolicy("hash", KEY);
    const raw = personRaw(1);
    const stored = JSON.parse(policy?.recordJson(raw) as string);
    const hash = hasher(KEY);
    expect(stored.sender.contact).toEqual({
      name: hash("Chidi Eze", "text"),
      phone: hash("+2348031234567", "phone"),
      email: hash("chidi@example.com", "email"),
      owner: hash("u1", "id"),
    });
    expect(stored.sender.addressDetails.streetLines).toEqual([
      hash("12 Allen Avenue", "text"),
      hash("Opposite the mall", "text"),
    ]);
    expect(stored.payments).toEqual({
      transaction: { method: "CARD" },
      accountNumber: hash("0123456789", "id"),
      customerId: hash("c-77", "id"),
    });
    // What analysts group by stays, and so does everything no schema knows.
    expect(stored.sender.addressDetails).toMatchObject({
      city: "Lagos",
      state: "Lagos",
      country: "Nigeria",
      stateOrProvinceCode: "LA",
      countryCode: "NG",
    });
    expect(stored.receiver.addressDetails).toEqual({
      city: "London",
      country: "United Kingdom",
      countryCode: "GB",
    });
    expect(stored.partnerOnlyField).toEqual({ kept: true });
    expect(Object.keys(stored)).toEqual(Object.keys(raw));
    expect(Object.keys(stored.sender.addressDetails)).toEqual(
      Object.keys(get(raw, "sender.addressDetails") as object),
    );
    const values = JSON.stringify(stored);
    for (const clear of [
      "Chidi",
      "2348031234567",
      "example.com",
      "Allen",
      "mall",
      "100001",
      "0123456789",
      "Ada",
    ])
      expect(values).not.toContain(clear);
  });

  it("hashes stably: one person's value in any spelling hashes alike, and the key changes every hash", () => {
    const hash = hasher(KEY);
    expect(hash("  Ada   OBI ", "text")).toBe(hash("ada obi", "text"));
    expect(hash("+234 803 123 4567", "phone")).toBe(hash("2348031234567", "phone"));
    expect(hash("(+234) 803-123-4567", "phone")).toBe(hash("+2348031234567", "phone"));
    expect(hash(" Ada@Example.COM ", "email")).toBe(hash("ada@example.com", "email"));
    // Identifiers are case-sensitive.
    expect(hash("u1", "id")).not.toBe(hash("U1", "id"));
    expect(hash("", "text")).toBe("");
    expect(hash("ada obi", "text")).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(hasher()("ada obi", "text")).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hasher()("ada obi", "text")).not.toBe(hash("ada obi", "text").replace("hmac-", ""));
    expect(hasher("another key, 16+ chars")("ada obi", "text")).not.toBe(hash("ada obi", "text"));
    // Plain SHA-256 of the normalised text: an analyst can look a known phone number up.
    const sha256 = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;
    expect(hasher()("+234 803 123 4567", "phone")).toBe(sha256("2348031234567"));
    expect(hasher()(" Ada  Obi", "text")).toBe(sha256("ada obi"));
    const hmac = `hmac-sha256:${createHmac("sha256", KEY).update("ada@example.com").digest("hex")}`;
    expect(hash("Ada@example.com", "email")).toBe(hmac);
  });

  it("drop removes each personal key from the JSON and nulls the typed columns", () => {
    const policy = personalDataPolicy("drop");
    const full = okFull(personRaw(2));
    const rows = toDetailRows(listBatch([full], T), policy);
    const values = rows.rows[0]?.values as unknown[];
    const stored = JSON.parse(values[DETAIL_JSON] as string);
    for (const path of PERSONAL_PATHS) expect(get(stored, path), path).toBeUndefined();
    expect(stored.sender.contact).toEqual({});
    expect(stored.sender.addressDetails).toEqual({
      city: "Lagos",
      state: "Lagos",
      country: "Nigeria",
      stateOrProvinceCode: "LA",
      countryCode: "NG",
    });
    const column = (c: string) => values[2 + SUMMARY_COLUMNS.indexOf(c)];
    for (const c of ["sender_name", "sender_phone", "sender_email", "receiver_name", "receiver_phone"])
      expect(column(c), c).toBeNull();
    expect(column("receiver_city")).toBe("London");
    expect(column("sender_country_code")).toBe("NG");
  });

  it("hash fills the typed columns with the same hashes as the JSON, on both views", () => {
    const policy = personalDataPolicy("hash");
    const hash = hasher();
    const summary = okSummary(summaryRaw(3));
    const feed = toFeedRows(feedBatch([summary], T), policy).rows[0] as unknown[];
    const column = (c: string) => feed[2 + SUMMARY_COLUMNS.indexOf(c)];
    expect(column("receiver_name")).toBe(hash("Ada Obi", "text"));
    expect(column("receiver_phone")).toBe(hash("+447700900123", "phone"));
    expect(column("receiver_email")).toBe(hash("ada@example.com", "email"));
    expect(column("sender_email")).toBeNull();
    const json = JSON.parse(feed[FEED_JSON] as string);
    expect(json.receiver.contact.phone).toBe(column("receiver_phone"));
    // The same record serialised twice is the same text: a re-read finds it unchanged.
    const again = toFeedRows(feedBatch([okSummary(summaryRaw(3))], T), policy).rows[0] as unknown[];
    expect(again[FEED_JSON]).toBe(feed[FEED_JSON]);
  });

  it("covers rejects: a malformed booking, an array of them, text, and a record too large to read", () => {
    const reject = (raw: unknown): Reject => ({ ok: false, id: null, createdAt: null, reason: "bad", raw });
    const malformed = { ...summaryRaw(4), totalAmount: "a lot" };
    const oversized = { head: '{"_id":"x","sender":{"contact":{"name":"Chidi Eze"', bytes: 2_000_000 };
    const batch = feedBatch([], T, {
      rejects: [reject(malformed), reject([malformed]), reject("Chidi Eze"), reject(oversized)],
    });
    for (const mode of ["hash", "drop"] as const) {
      const rows = toFeedRows(batch, personalDataPolicy(mode));
      const text = JSON.stringify(rows.rejects.map((r) => r.raw));
      expect(text, mode).not.toContain("Chidi");
      expect(text, mode).not.toContain("447700900123");
      expect(text, mode).toContain('"a lot"');
      expect(rows.rejects[3]?.raw, mode).toMatchObject({ bytes: 2_000_000 });
    }
    const dropped = toFeedRows(batch, personalDataPolicy("drop")).rejects.map((r) => r.raw);
    expect(dropped[2]).toBeNull();
    expect(dropped[3]).toEqual({ bytes: 2_000_000 });
    const hashed = toFeedRows(batch, personalDataPolicy("hash")).rejects.map((r) => r.raw);
    expect(get(hashed[0], "receiver.contact.name")).toBe(hasher()("Ada Obi", "text"));
    // The batch itself is not changed: the core may still hold it.
    expect(get(malformed, "receiver.contact.name")).toBe("Ada Obi");
  });
});
