/**
 * SYNC_PERSONAL_DATA fails closed: a personal subtree of a shape the contract does not allow (an
 * array, text or a number where an object belongs) is hashed or dropped whole, never kept, in a
 * booking's JSON, in a reject's and in the typed columns, at any depth. Then through a real store:
 * the database file and its -wal hold none of the people. The CLI against a hostile source is in
 * personal-data-shapes.e2e.test.ts.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/store/canonical-json.js";
import { openStore } from "../src/store/index.js";
import { hasher, jsonHasher, PERSONAL_SUBTREES, personalDataPolicy } from "../src/store/personal-data.js";
import { type Param, SUMMARY_COLUMNS } from "../src/store/rows.js";
import type { Reject } from "../src/sync/ports.js";
import { nested, ODD_SHAPES, type OddShape, person, plant, planted } from "./support/odd-personal-shapes.js";
import { feedBatch, fullRaw, tempDir } from "./support/store-fixtures.js";

const KEY = "odd-shapes-test-key-0123456789";
const hash = hasher(KEY);
const hashJson = jsonHasher(KEY);
const reject = (raw: unknown): Reject => ({ ok: false, id: null, createdAt: null, reason: "bad", raw });
const SHAPES = ODD_SHAPES.map((shape, i) => [shape.label, i] as const);

const get = (obj: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);

/** What `hash` stores for a value replaced whole. */
function whole(value: unknown): unknown {
  if (typeof value === "string") return hash(value, "text");
  if (typeof value === "number") return hash(String(value), "text");
  return hashJson(value as object);
}

describe("a personal subtree of an unexpected shape", () => {
  it("hashes to known HMAC-SHA256 values (computed outside this code): normalised text, phone digits, canonical JSON", () => {
    expect(hash("  Ada   OBI ", "text")).toBe(
      "hmac-sha256:f48d1a33f066686a471675aeb72c3798cc196b4debf3a3bea0c3fb2b5a2fb410",
    );
    expect(hash("+234 803 123 4567", "phone")).toBe(
      "hmac-sha256:3dff467992c67ffe9612e88ec74f4f5161b361924f8186a2aee3637f05462fd6",
    );
    expect(hashJson({ b: 1, a: [2] })).toBe(
      "hmac-sha256:0f9f0ac5a5d2193af76105359948fe5906071bbdc28994630900cef5f37cf1da",
    );
  });

  it("knows the subtrees that must be objects", () => {
    expect(PERSONAL_SUBTREES).toEqual([
      "sender",
      "sender.contact",
      "sender.addressDetails",
      "receiver",
      "receiver.contact",
      "receiver.addressDetails",
      "payments",
    ]);
  });

  it.each(SHAPES)("%s: hash stores the hash of the whole value, every other field kept", (_label, i) => {
    const policy = personalDataPolicy("hash", KEY);
    const record = plant(fullRaw(i), i);
    const json = policy?.recordJson(record) as string;
    const raw = JSON.stringify(policy?.protectReject(reject(record)).raw);
    for (const value of planted(i)) {
      expect(json).not.toContain(value);
      expect(raw).not.toContain(value);
    }
    const stored = JSON.parse(json);
    expect(JSON.parse(raw)).toEqual(stored);
    const { key, at } = ODD_SHAPES[i] as OddShape;
    const path = at === undefined ? key : `${key}.${at}`;
    expect(get(stored, path)).toBe(whole(get(record, path)));
    // Everything outside the personal subtrees is kept, and the keys keep their order.
    expect(Object.keys(stored)).toEqual(Object.keys(record));
    for (const k of Object.keys(record).filter((k) => !PERSONAL_SUBTREES.includes(k)))
      expect(stored[k], k).toEqual(record[k]);
  });

  it.each(SHAPES)("%s: drop removes the whole value", (_label, i) => {
    const policy = personalDataPolicy("drop");
    const record = plant(fullRaw(i), i);
    const json = policy?.recordJson(record) as string;
    const raw = JSON.stringify(policy?.protectReject(reject(record)).raw);
    for (const value of planted(i)) {
      expect(json).not.toContain(value);
      expect(raw).not.toContain(value);
    }
    const { key, at } = ODD_SHAPES[i] as OddShape;
    const stored = JSON.parse(json);
    if (at === undefined) expect(Object.hasOwn(stored, key)).toBe(false);
    else if (!at.endsWith(".0")) expect(get(stored, `${key}.${at}`)).toBeUndefined();
    expect(stored._id).toBe(record._id);
    expect(stored.source).toEqual(record.source);
  });

  it("a reject that is no booking: text, a number, arrays of them, bookings nested in arrays", () => {
    const p = person(40);
    const booking = plant(fullRaw(40), 0);
    const raws = [
      p.email,
      Number(p.digits),
      [p.name, p.phone],
      [[p.name], { receiver: `${p.address}` }],
      [[booking]],
      { head: `{"receiver":"${p.name}"`, bytes: 5 },
    ];
    for (const mode of ["hash", "drop"] as const) {
      const policy = personalDataPolicy(mode, mode === "hash" ? KEY : undefined);
      const text = JSON.stringify(raws.map((raw) => policy?.protectReject(reject(raw)).raw));
      for (const value of [p.email, p.digits, p.name, p.address, ...planted(0)])
        expect(text, mode).not.toContain(value);
    }
    const hashed = raws.map((raw) => personalDataPolicy("hash", KEY)?.protectReject(reject(raw)).raw);
    expect(hashed[0]).toBe(hash(p.email, "text"));
    expect(hashed[2]).toEqual([hash(p.name, "text"), hash(p.phone, "text")]);
    expect(hashed[4]).toEqual([hashJson([booking])]);
    const dropped = raws.map((raw) => personalDataPolicy("drop")?.protectReject(reject(raw)).raw);
    expect(dropped).toEqual([null, null, [null, null], [null, {}], [null], { bytes: 5 }]);
    // Nothing personal in them: left as they are.
    expect(personalDataPolicy("drop")?.protectReject(reject([true, null, {}])).raw).toEqual([true, null, {}]);
  });

  it("a subtree 200,000 levels deep is hashed without recursion, or dropped", () => {
    const p = person(41);
    const deep = nested(200_000, { contact: { name: p.name, phone: p.phone } });
    const record = { ...fullRaw(41), receiver: deep };
    const hashed = JSON.parse(personalDataPolicy("hash", KEY)?.recordJson(record) as string);
    expect(hashed.receiver).toBe(hashJson(deep as object));
    expect(hashed.receiver).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const dropped = JSON.parse(personalDataPolicy("drop")?.recordJson(record) as string);
    expect(dropped).not.toHaveProperty("receiver");
    // A reject that is the deep value itself.
    const raw = personalDataPolicy("hash", KEY)?.protectReject(reject(nested(200_000, p.name))).raw;
    expect(raw).toEqual([hashJson(nested(199_999, p.name) as object)]);
  });

  it("the canonical JSON is JSON.stringify's with keys sorted, at any depth", () => {
    const value = { b: [1, "two", null, { d: true, c: 1.5 }], a: { é: "\u2028", z: [] }, u: undefined };
    expect([...canonicalJson(value)].join("")).toBe(
      '{"a":{"z":[],"é":"\u2028"},"b":[1,"two",null,{"c":1.5,"d":true}]}',
    );
    expect([...canonicalJson([undefined, Number.NaN])].join("")).toBe(
      JSON.stringify([undefined, Number.NaN]),
    );
    const deep = [...canonicalJson(nested(200_000, "x"))].join("");
    expect(deep).toBe(`${"[".repeat(200_000)}"x"${"]".repeat(200_000)}`);
    // Key order does not change a hash.
    expect(hashJson({ a: 1, b: 2 })).toBe(hashJson({ b: 2, a: 1 }));
  });

  it("typed columns holding anything but text are hashed or nulled all the same", () => {
    const values: Param[] = SUMMARY_COLUMNS.map(() => null);
    const name = SUMMARY_COLUMNS.indexOf("receiver_name");
    const phone = SUMMARY_COLUMNS.indexOf("receiver_phone");
    const city = SUMMARY_COLUMNS.indexOf("receiver_city");
    values[name] = "Ada Obi";
    values[phone] = 2348031234567;
    values[city] = "Lagos";
    const hashed = [...values];
    personalDataPolicy("hash", KEY)?.protectColumns(hashed, 0);
    expect([hashed[name], hashed[phone], hashed[city]]).toEqual([
      hash("Ada Obi", "text"),
      hash("2348031234567", "phone"),
      "Lagos",
    ]);
    const dropped = [...values];
    personalDataPolicy("drop")?.protectColumns(dropped, 0);
    expect([dropped[name], dropped[phone], dropped[city]]).toEqual([null, null, "Lagos"]);
  });
});

describe.each(["hash", "drop"] as const)("a real store under %s", (mode) => {
  it("keeps no person of an odd shape in the database file or its -wal", async () => {
    const tmp = tempDir();
    const path = tmp.file();
    try {
      const policy = personalDataPolicy(mode, mode === "hash" ? KEY : undefined);
      const store = openStore(path, { personalData: policy });
      const rejects = ODD_SHAPES.map((_, i) => reject(plant(fullRaw(i), i)));
      rejects.push(reject([person(40).name, person(40).phone]));
      await store.save(feedBatch([], "2025-03-01T00:00:00.000Z", { rejects }));
      const forbidden = [...ODD_SHAPES.flatMap((_, i) => planted(i)), person(40).name, person(40).phone];
      const bytes = () =>
        Buffer.concat([path, `${path}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
      const open = bytes();
      expect(fs.existsSync(`${path}-wal`)).toBe(true);
      store.close();
      const closed = bytes();
      for (const value of forbidden) {
        expect(open.includes(value), value).toBe(false);
        expect(closed.includes(value), value).toBe(false);
      }
      // The rows are there, their other fields too.
      expect(closed.includes("Acme Exports")).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });
});
