/**
 * `booking-sync labels import` / `labels export` as a user runs them: a subprocess against a real
 * SQLite file, its exit code and output, and the labels as the views show them.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { analyst, type Harness, harness, holdWriterLease, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const LABELS = {
  booking_state: { "0": "draft", "1": "pending", "2": "confirmed" },
  order_state: { "0": "new", "6": "delivered" },
  customer_acceptance_state: { "1": "accepted" },
};

/** Writes `content` (JSON unless a string) into the harness's folder; returns its path. */
function file(h: Harness, name: string, content: unknown): string {
  const path = join(h.dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("booking-sync labels", () => {
  it("import then export gives back the file; a second import replaces the first", async () => {
    h = await harness({ bookings: 10 });
    const imported = await runCli(["labels", "import", file(h, "labels.json", LABELS)], h.env());
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.stdout).toBe(
      "imported 6 labels (booking_state 3, order_state 2, customer_acceptance_state 1)\n",
    );
    const exported = await runCli(["labels", "export"], h.env());
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual(LABELS);

    const fewer = { booking_state: { "3": "cancelled" } };
    const again = await runCli(["labels", "import", file(h, "fewer.json", fewer)], h.env());
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      "imported 1 label (booking_state 1, order_state 0, customer_acceptance_state 0)",
    );
    const after = await runCli(["labels", "export"], h.env());
    expect(JSON.parse(after.stdout)).toEqual({ ...fewer, order_state: {}, customer_acceptance_state: {} });
  });

  it.each([
    [
      "an unknown kind",
      { booking_state: { "1": "ok" }, shipment_state: { "1": "x" } },
      'unknown kind "shipment_state"',
    ],
    [
      "a non-integer code",
      { order_state: { "0": "new", "1.5": "half" } },
      'order_state code "1.5" is not valid',
    ],
    ["a negative code", { order_state: { "-1": "minus" } }, 'order_state code "-1" is not valid'],
    ["an empty label", { booking_state: { "2": "" } }, 'booking_state "2" = "" is not valid'],
    ["a label that is not text", { booking_state: { "2": 7 } }, 'booking_state "2" = 7 is not valid'],
    ["a kind that is not an object", { booking_state: ["pending"] }, "booking_state is not valid"],
    ["text that is not JSON", '{ "booking_state": ', "is not JSON"],
  ])("a file with %s exits 2, names the entry and changes nothing", async (_what, content, named) => {
    h = await harness({ bookings: 10 });
    expect((await runCli(["labels", "import", file(h, "good.json", LABELS)], h.env())).code).toBe(0);
    const path = file(h, "bad.json", content);
    const r = await runCli(["labels", "import", path], h.env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`labels file ${JSON.stringify(path)}`);
    expect(r.stderr).toContain(named);
    expect(r.stderr).toMatch(/^Try: /m);
    expect(r.stdout).toBe("");
    expect(JSON.parse((await runCli(["labels", "export"], h.env())).stdout)).toEqual(LABELS);
  });

  it("a missing file exits 2 naming the path", async () => {
    h = await harness({ bookings: 10 });
    const path = join(h.dir, "no-such-labels.json");
    const r = await runCli(["labels", "import", path], h.env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`labels file ${JSON.stringify(path)} cannot be read (ENOENT)`);
  });

  it("export reads while another process holds the writer lease; import is refused (exit 1)", async () => {
    h = await harness({ bookings: 10 });
    expect((await runCli(["labels", "import", file(h, "labels.json", LABELS)], h.env())).code).toBe(0);
    expect(holdWriterLease(h.store, "test:holder")).toBe(true);
    const exported = await runCli(["labels", "export"], h.env());
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual(LABELS);
    const r = await runCli(["labels", "import", file(h, "other.json", { order_state: {} })], h.env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("another booking-sync is writing to this database");
  });

  it("after an import, bookings_v shows each label beside its code, and 'state N' for a code without one", async () => {
    h = await harness({ bookings: 120 });
    expect((await h.sync()).status).toBe("success");
    expect((await runCli(["labels", "import", file(h, "labels.json", LABELS)], h.env())).code).toBe(0);
    const db = analyst(h.dbPath);
    try {
      const rows = db
        .prepare(
          "SELECT booking_id, booking_state, booking_state_label, order_state, order_state_label FROM bookings_v",
        )
        .all() as Array<{
        booking_id: string;
        booking_state: number;
        booking_state_label: string;
        order_state: number;
        order_state_label: string;
      }>;
      expect(rows.length).toBe(120);
      const label = (labels: Record<string, string>, code: number) => labels[String(code)] ?? `state ${code}`;
      for (const r of rows) {
        expect(r.booking_state_label, r.booking_id).toBe(label(LABELS.booking_state, r.booking_state));
        expect(r.order_state_label, r.booking_id).toBe(label(LABELS.order_state, r.order_state));
      }
      // Both a labelled and an unlabelled code occur, so both branches were checked.
      const shown = new Set(rows.map((r) => r.booking_state_label));
      expect(shown).toContain("pending");
      expect([...shown].some((s) => s.startsWith("state "))).toBe(true);
    } finally {
      db.close();
    }
  });
});
