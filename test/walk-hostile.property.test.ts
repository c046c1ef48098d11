/**
 * Property test of a whole sync against a misbehaving feed. A model source holds bookings at their
 * TRUE times (milliseconds, or microseconds with many bookings sharing a millisecond), sorts and
 * filters by them under either cursor rule at full precision, and builds each answer's JSON as the
 * server would; one misbehaviour is played on it (a record dated wrong, an impossible date, a time
 * without a zone, an empty page that claims more, records or a whole page repeated, a page shuffled
 * or shifted, a garbage nextCursor), or none. Every answer goes through the real parsers, and the
 * sync (runSync: walk, tie reads, drift check, repair) writes to the real store, SQLite and PostgreSQL.
 *
 * The one sync under the misbehaviour must either fail loudly with the checkpoint unmoved, or
 * succeed with every booking in the mirror (or quarantined, if the misbehaviour broke its record).
 * Once the source heals, a sync or two must make the mirror's ids equal the source's.
 * Seeded (FC_SEED to vary, FC_RUNS for more runs); fast-check prints the seed and the shrunk case,
 * and a failure's message carries the feed conversation and the sync's log.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { parseFeed, parseList } from "../src/api/response.js";
import { ApiError } from "../src/errors.js";
import type { FeedPage, FeedQuery, ListPage, ListQuery, PartnerApi } from "../src/sync/ports.js";
import { runSync, type SyncReport } from "../src/sync/run-sync.js";
import { fixedClock, memoryLogger } from "./support/fakes.js";
import { type Backend, describeBackends } from "./support/postgres.js";
import { type CaseMirror, propertyMirrors } from "./support/property-mirror.js";

const SEED = Number(process.env.FC_SEED ?? 20261124);
const NUM_RUNS = Number(process.env.FC_RUNS ?? 150);
/** Where the source's history starts, epoch µs. */
const T0_US = Date.UTC(2026, 0, 1) * 1000;
const YEAR_MS = 365 * 86_400_000;

type Rule = "exclusive" | "inclusive";
type Slot = "mid" | "last";
type Broken = "feb30" | "apr31" | "month13" | "hour25" | "noZone";

/**
 * One misbehaviour, played on the `request`-th feed request (0-based) of the sync under test; past
 * its last request, none is played. A sticky record fault stays on that booking, in both endpoints'
 * answers, until the source heals.
 */
type Fault =
  | { kind: "none" }
  /** One record dated `byMs` newer (+) or older (-) than its true time. */
  | { kind: "outlier"; request: number; slot: Slot; byMs: number; sticky: boolean }
  /** One record's createdAt names no real time, or has no zone. */
  | { kind: "broken"; request: number; slot: Slot; how: Broken; sticky: boolean }
  | { kind: "emptyPage"; request: number }
  /** The page starts with the last `count` records of the previous answer (and drops as many). */
  | { kind: "repeatRecords"; request: number; count: number }
  | { kind: "repeatPage"; request: number }
  | { kind: "shuffle"; request: number; keys: number[] }
  | { kind: "garbageCursor"; request: number; value: unknown }
  /** The page starts `k` records too low (skips them, k > 0) or `-k` too high (repeats them). */
  | { kind: "shift"; request: number; k: number };

interface Booking {
  id: string;
  /** True creation time, epoch µs: what the server sorts and filters by. */
  us: number;
}

/** The source: bookings at their true times, and how it writes a time. */
class Source {
  bookings: Booking[] = [];
  #next = 0;
  constructor(readonly micro: boolean) {}

  /** Adds bookings `gaps` µs apart, the first `gaps[0]` after `after` or the newest booking. */
  add(gaps: readonly number[], after = T0_US): void {
    let us = Math.max(after, this.newestUs() ?? after);
    for (const gap of gaps) {
      us += this.micro ? gap : Math.floor(gap / 1000) * 1000;
      this.bookings.push({ id: `b${String(this.#next++).padStart(4, "0")}`, us });
    }
  }

  newestUs(): number | undefined {
    let m: number | undefined;
    for (const b of this.bookings) if (m === undefined || b.us > m) m = b.us;
    return m;
  }

  /** Newest first by true time; within one instant a fixed order (id, descending). */
  newestFirst(): Booking[] {
    return [...this.bookings].sort((a, b) => b.us - a.us || (a.id < b.id ? 1 : -1));
  }

  /** An instant as this source writes it: `.123Z`, or `.123456Z` when it keeps microseconds. */
  text(us: number): string {
    const ms = new Date(Math.floor(us / 1000)).toISOString();
    return this.micro ? `${ms.slice(0, -1)}${String(us % 1000).padStart(3, "0")}Z` : ms;
  }
}

/** A cursor as epoch µs at full precision; undefined when it is not one the model understands. */
function parseUs(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!m) return undefined;
  const digits = (m[2] ?? "").padEnd(9, "0");
  if (/[1-9]/.test(digits.slice(6))) return undefined; // below a microsecond: the walk never sends it
  return Date.parse(`${m[1]}Z`) * 1000 + Number(digits.slice(0, 6));
}

function brokenText(text: string, how: Broken): string {
  const clock = text.slice(10);
  switch (how) {
    case "feb30":
      return `${text.slice(0, 4)}-02-30${clock}`;
    case "apr31":
      return `${text.slice(0, 4)}-04-31${clock}`;
    case "month13":
      return `${text.slice(0, 4)}-13-01${clock}`;
    case "hour25":
      return `${text.slice(0, 11)}25${text.slice(13)}`;
    case "noZone":
      return text.slice(0, -1);
  }
}

/** What a fake API served and did during one sync. */
interface Served {
  /** Ids in any feed answer, valid or not. */
  feedIds: Set<string>;
  /** Ids a shifted newest page (no cursor, nothing to check it against) hid. */
  hiddenAtTop: Set<string>;
  /** Ids whose record the misbehaviour made invalid. */
  broken: Set<string>;
  /** How the misbehaviour was played; null when it was not. */
  fired: string | null;
  /** Each answer in a line, for a failure's message. */
  trace: string[];
  /** Requests no real client would send: a bug in the walk, or in this model. */
  modelErrors: string[];
}

/**
 * A PartnerApi over `source` that plays `fault`, building each body as the server would and reading
 * it with the real parsers (a body they refuse is thrown as the client would, as an ApiError).
 */
function misbehavingApi(source: Source, rule: Rule, fault: Fault) {
  const served: Served = {
    feedIds: new Set(),
    hiddenAtTop: new Set(),
    broken: new Set(),
    fired: null,
    trace: [],
    modelErrors: [],
  };
  /** Sticky record faults: the createdAt a booking is served with instead of its true one. */
  const overrides = new Map<string, string>();
  let requests = 0;
  let previous: Record<string, unknown>[] | undefined;
  let healed = false;

  const record = (b: Booking, full: boolean): Record<string, unknown> => {
    const createdAt = overrides.get(b.id) ?? source.text(b.us);
    const summary = {
      _id: b.id,
      createdAt,
      totalAmount: 1000 + (b.us % 997),
      paid: false,
      bookingState: 1,
      orderState: 0,
    };
    return full ? { ...summary, type: "IN", updatedAt: createdAt } : summary;
  };
  const show = (records: Record<string, unknown>[]) =>
    records.map((r) => `${r._id}@${String(r.createdAt).replace(/^2026-01-01T00:00:/, "")}`).join(" ");

  async function fetchRecent(q: FeedQuery): Promise<FeedPage> {
    const n = requests++;
    if (q.limit < 1 || q.limit > 100) served.modelErrors.push(`limit ${q.limit}`);
    const cursorUs = q.cursor === undefined ? Number.POSITIVE_INFINITY : parseUs(q.cursor);
    if (cursorUs === undefined) {
      served.modelErrors.push(`the walk sent cursor ${q.cursor}`);
      throw new ApiError("fetch-recent-bookings: 400 bad cursor", { status: 400, retryable: false });
    }
    const all = source.newestFirst();
    const below = (b: Booking) => (rule === "exclusive" ? b.us < cursorUs : b.us <= cursorUs);
    const window = all.filter(below);
    const f = healed || fault.kind === "none" || fault.request !== n ? undefined : fault;
    let page = window.slice(0, q.limit);
    let hasMore = window.length > q.limit;
    const k = f?.kind === "shift" ? Math.sign(f.k) * Math.min(Math.abs(f.k), q.limit) : 0;
    if (k > 0) {
      page = window.slice(k, k + q.limit);
      hasMore = window.length > k + q.limit;
      const hidden = window.slice(0, k).map((b) => b.id);
      if (q.cursor === undefined) for (const id of hidden) served.hiddenAtTop.add(id);
      served.fired = `shift: skipped ${hidden.join(" ") || "nothing"}`;
    } else if (k < 0) {
      const above = all.filter((b) => !below(b)).slice(k);
      const kept = window.slice(0, q.limit - above.length);
      page = [...above, ...kept];
      hasMore = window.length > kept.length;
      served.fired = `shift: repeated ${above.map((b) => b.id).join(" ") || "nothing"}`;
    }
    const bookings = page.map((b) => record(b, false));
    if (f?.kind === "outlier" || f?.kind === "broken") playOnRecord(f, page, bookings);
    let data: Record<string, unknown> = {
      bookings,
      nextCursor: hasMore ? (bookings.at(-1)?.createdAt ?? null) : null,
      hasMore,
    };
    if (f) data = playOnPage(f, data, q.cursor);
    const sent = data.bookings as Record<string, unknown>[];
    previous = structuredClone(sent);
    for (const r of sent) served.feedIds.add(r._id as string);
    served.trace.push(
      `feed#${n} cursor=${q.cursor ?? "-"} -> [${show(sent)}] hasMore=${data.hasMore}${f ? " (misbehaved)" : ""}`,
    );
    const body = { success: true, status: 200, message: "ok", data };
    const verdict = parseFeed(JSON.parse(JSON.stringify(body)));
    if (!verdict.ok)
      throw new ApiError(`fetch-recent-bookings: ${verdict.problem}`, {
        status: 200,
        retryable: true,
        attempts: 1,
      });
    return { ...verdict.page, attempts: 1 };
  }

  async function listBookings(q: ListQuery): Promise<ListPage> {
    if (q.pageSize < 1 || q.pageSize > 100 || q.page < 1)
      served.modelErrors.push(`list ${JSON.stringify(q)}`);
    const all = source.newestFirst();
    const data = all.slice((q.page - 1) * q.pageSize, q.page * q.pageSize).map((b) => record(b, true));
    const pagination = {
      total: all.length,
      page: q.page,
      pageSize: q.pageSize,
      totalPages: Math.ceil(all.length / q.pageSize),
    };
    served.trace.push(`list p${q.page}/${q.pageSize} -> [${show(data)}]`);
    const verdict = parseList(
      JSON.parse(JSON.stringify({ success: true, status: 200, message: "ok", data, pagination })),
    );
    if (!verdict.ok)
      throw new ApiError(`list-bookings: ${verdict.problem}`, { status: 200, retryable: true, attempts: 1 });
    return { ...verdict.page, attempts: 1 };
  }

  function playOnRecord(
    f: Extract<Fault, { kind: "outlier" | "broken" }>,
    page: Booking[],
    bookings: Record<string, unknown>[],
  ): void {
    if (page.length === 0) return;
    const i = f.slot === "last" || page.length < 3 ? page.length - 1 : Math.floor(page.length / 2);
    const b = page[i] as Booking;
    const text =
      f.kind === "outlier" ? source.text(b.us + f.byMs * 1000) : brokenText(source.text(b.us), f.how);
    (bookings[i] as Record<string, unknown>).createdAt = text;
    if (f.sticky) overrides.set(b.id, text);
    if (f.kind === "broken") served.broken.add(b.id);
    served.fired = `${f.kind}: ${b.id} (${i + 1} of ${page.length}) served as ${text}${f.sticky ? ", sticky" : ""}`;
  }

  function playOnPage(f: Fault, data: Record<string, unknown>, cursor?: string): Record<string, unknown> {
    const bookings = data.bookings as Record<string, unknown>[];
    switch (f.kind) {
      case "emptyPage":
        served.fired = "emptyPage";
        return { bookings: [], nextCursor: cursor ?? null, hasMore: true };
      case "repeatRecords": {
        if (!previous) return data;
        const again = previous.slice(-Math.min(f.count, bookings.length));
        const out = [...again, ...bookings].slice(0, bookings.length);
        const dropped = bookings.length + again.length - out.length;
        served.fired = `repeatRecords: ${again.length} again, ${dropped} dropped`;
        return { ...data, bookings: out, hasMore: data.hasMore === true || dropped > 0 };
      }
      case "repeatPage":
        if (!previous) return data;
        served.fired = "repeatPage";
        return { ...data, bookings: structuredClone(previous) };
      case "shuffle": {
        const keyed = bookings.map((r, i) => ({ r, i, key: f.keys[i % f.keys.length] as number }));
        keyed.sort((a, b) => a.key - b.key || a.i - b.i);
        served.fired = `shuffle: ${keyed.map((x) => x.i).join(",")}`;
        return { ...data, bookings: keyed.map((x) => x.r) };
      }
      case "garbageCursor":
        served.fired = `garbageCursor: ${JSON.stringify(f.value)}`;
        return { ...data, nextCursor: f.value };
      default:
        return data;
    }
  }

  return {
    api: { fetchRecent, listBookings } satisfies PartnerApi,
    served,
    heal() {
      healed = true;
      overrides.clear();
    },
  };
}

// --- cases -----------------------------------------------------------------------------------

/** Gaps between bookings, µs: ties, milliseconds apart, or (microsecond sources) within one. */
const gapArb = (micro: boolean) =>
  micro
    ? fc.oneof(
        { weight: 1, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 300 }) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 2000 }).map((ms) => ms * 1000) },
      )
    : fc.oneof(
        { weight: 1, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 3000 }).map((ms) => ms * 1000) },
      );

/** Milliseconds to misdate a record by, newer (+) or older (-): within a second, an hour, a year. */
const byMsArb = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 1, max: 999 }),
      fc.integer({ min: 1000, max: 3_600_000 }),
      fc.integer({ min: 3_600_000, max: YEAR_MS }),
    ),
    fc.boolean(),
  )
  .map(([ms, newer]) => (newer ? ms : -ms));

const faultArb: fc.Arbitrary<Fault> = (() => {
  const request = fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 24 }));
  const slot = fc.constantFrom<Slot>("mid", "last");
  return fc.oneof(
    fc.constant<Fault>({ kind: "none" }),
    fc.record({ kind: fc.constant("outlier" as const), request, slot, byMs: byMsArb, sticky: fc.boolean() }),
    fc.record({
      kind: fc.constant("broken" as const),
      request,
      slot,
      how: fc.constantFrom<Broken>("feb30", "apr31", "month13", "hour25", "noZone"),
      sticky: fc.boolean(),
    }),
    fc.record({ kind: fc.constant("emptyPage" as const), request }),
    fc.record({
      kind: fc.constant("repeatRecords" as const),
      request,
      count: fc.integer({ min: 1, max: 10 }),
    }),
    fc.record({ kind: fc.constant("repeatPage" as const), request }),
    fc.record({
      kind: fc.constant("shuffle" as const),
      request,
      keys: fc.array(fc.integer(), { minLength: 10, maxLength: 10 }),
    }),
    fc.record({
      kind: fc.constant("garbageCursor" as const),
      request,
      value: fc.constantFrom<unknown>("abc", "", "2026-02-30T10:00:00.000Z", 12345, { $gt: 1 }, true),
    }),
    fc.record({
      kind: fc.constant("shift" as const),
      request,
      k: fc.integer({ min: 1, max: 10 }).chain((k) => fc.constantFrom(k, -k)),
    }),
  );
})();

const caseArb = fc.boolean().chain((micro) =>
  fc.record({
    pageSize: fc.integer({ min: 2, max: 10 }),
    rule: fc.constantFrom<Rule>("exclusive", "inclusive"),
    micro: fc.constant(micro),
    /** Whether a healthy sync mirrored `initial` before `added` arrived. */
    presync: fc.boolean(),
    lookbackSeconds: fc.constantFrom(1, 10, 120),
    batchPages: fc.integer({ min: 1, max: 4 }),
    initial: fc.array(gapArb(micro), { maxLength: 120, size: "max" }),
    added: fc.array(gapArb(micro), { minLength: 1, maxLength: 120, size: "max" }),
    fault: faultArb,
  }),
);

type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never;

/**
 * Counterexamples found against booking-sync (shrunk), replayed first on every run. Each names
 * the rule at fault; see the report that came with this test.
 */
const FOUND: Array<[Case]> = [
  // A page shifted (skips b0005) right after a tie run read through list-bookings: the walk owes no
  // overlap after a tie step (anchor: null), so the skip goes unnoticed and the run succeeds.
  [
    {
      pageSize: 6,
      rule: "exclusive",
      micro: true,
      presync: false,
      lookbackSeconds: 1,
      batchPages: 1,
      initial: [118, 150, 151, 129],
      added: [206, 165, 104, 105, 298, 123, 5, 6, 16, 54, 146, 52, 96, 75, 1],
      fault: { kind: "shift", request: 3, k: 1 },
    },
  ],
  // One booking dated an hour older, on both endpoints, above a tie run: the tie read takes it for
  // the end of the run and reports the run read whole without reading it (b0000 lost).
  [
    {
      pageSize: 3,
      rule: "exclusive",
      micro: true,
      presync: false,
      lookbackSeconds: 1,
      batchPages: 1,
      initial: [],
      added: [33, 297, 29, 240, 1000, 1000, 212, 189, 1, 0, 1, 1000, 1],
      fault: { kind: "outlier", request: 3, slot: "mid", byMs: -3_600_000, sticky: true },
    },
  ],
  // A record quarantined once (30 February), then served valid forever: below the lookback, and
  // counted as accounted for by the repair, it never reaches the mirror.
  [
    {
      pageSize: 3,
      rule: "exclusive",
      micro: false,
      presync: false,
      lookbackSeconds: 1,
      batchPages: 1,
      initial: [],
      added: [0, 1000, 1000, 1000, 1000, 1000, 45000, 466000, 487000, 0],
      fault: { kind: "broken", request: 4, slot: "mid", how: "feb30", sticky: false },
    },
  ],
  // One booking dated a second newer, on both endpoints, misleads a tie read (b0009 is skipped) in
  // a run that then fails. After healing, the walk's floor (from a checkpoint the misdated time
  // raised) is above the hole, and the repair's search cannot place a gap inside a millisecond tie
  // group: b0009 never arrives.
  [
    {
      pageSize: 3,
      rule: "exclusive",
      micro: true,
      presync: false,
      lookbackSeconds: 1,
      batchPages: 1,
      initial: [],
      added: [
        1, 1, 1, 71, 139, 230, 110, 102, 286, 146, 300, 239, 0, 1000, 1000, 52, 163, 60, 12, 131, 154, 32,
        1000, 1, 0, 1000, 11, 205, 6, 5, 298, 1000, 4, 7, 4, 137, 1000, 92, 22, 200, 1000, 197, 102, 1000, 57,
        256, 6, 2, 290, 50, 193, 299, 106, 220, 0, 1,
      ],
      fault: { kind: "outlier", request: 24, slot: "last", byMs: 1002, sticky: true },
    },
  ],
];

// --- playing a case --------------------------------------------------------------------------

async function play(mirrors: (batchPages: number) => Promise<CaseMirror>, c: Case): Promise<void> {
  const mirror = await mirrors(c.batchPages);
  const { store } = mirror;
  const logger = memoryLogger();
  const clock = fixedClock(T0_US / 1000);
  const source = new Source(c.micro);
  const sync = (api: PartnerApi) => {
    // Each run begins after the one before saved: what that stored counts as stored before it.
    clock.set(clock.now().getTime() + 1);
    return runSync(
      { api, store, clock, logger, signal: new AbortController().signal },
      { pageSize: c.pageSize, lookbackSeconds: c.lookbackSeconds },
    );
  };
  /** The clock a minute past the newest booking: the sync runs after they were all created. */
  const catchUp = () => clock.set(Math.floor((source.newestUs() ?? T0_US) / 1000) + 60_000);
  let context = "";
  const why = (what: string) =>
    [
      what,
      context,
      "log:",
      ...logger.lines
        .filter((l) => l.level !== "debug")
        .map((l) => `  ${l.level} ${l.msg} ${JSON.stringify(l.obj)}`),
    ].join("\n");
  try {
    source.add(c.initial);
    if (c.presync) {
      catchUp();
      const report = await sync(misbehavingApi(source, c.rule, { kind: "none" }).api);
      expect(report.status, why(`healthy sync: ${report.error?.message}`)).toBe("success");
      expect(await mirror.ids(), why("healthy sync")).toEqual(sortedIds(source));
    }
    // New bookings are created after the previous sync started.
    source.add(c.added, clock.now().getTime() * 1000);
    catchUp();
    const before = (await store.readStream("feed")).checkpoint;
    const hostile = misbehavingApi(source, c.rule, c.fault);
    const { served } = hostile;
    const report = await sync(hostile.api);
    context = [
      "feed and list answers:",
      ...served.trace.slice(-80).map((t) => `  ${t}`),
      `run under the misbehaviour: ${report.status} ${report.error?.message ?? ""}`,
      `  played: ${served.fired}; checkpoint ${before} -> ${report.checkpointAfter}; ties read ${report.tiesRead.length}, overflows [${report.tieOverflows}]`,
    ].join("\n");
    expect(served.modelErrors, why("requests no client should send")).toEqual([]);
    if (served.fired === null) {
      // Nothing was played: the source was healthy, and one sync must mirror all of it.
      expect(report.status, why("a sync of a healthy source must succeed")).toBe("success");
      expect(report.tieOverflows, why("a healthy source's tie runs must be read whole")).toEqual([]);
      expect(await mirror.ids(), why("one sync of a healthy source must mirror it")).toEqual(
        sortedIds(source),
      );
    }
    await checkOutcome(mirror, source, served, report, before, why);

    hostile.heal();
    for (let round = 1; ; round++) {
      const healed = await sync(hostile.api);
      context += `\nsync ${round} after healing: ${healed.status} ${healed.error?.message ?? ""}; checkpoint ${healed.checkpointAfter}`;
      expect(healed.status, why("a sync after the source healed must succeed")).toBe("success");
      const missing = await missingFrom(mirror, source);
      if (missing.length === 0 || round === 2) {
        expect(missing, why("after healing, the mirror must hold every booking of the source")).toEqual([]);
        expect(await mirror.ids(), why("after healing, the mirror must equal the source")).toEqual(
          sortedIds(source),
        );
        break;
      }
    }
  } finally {
    await mirror.close();
  }
}

/** Outcome (a): failed loudly with the checkpoint unmoved; or (b): succeeded with nothing lost. */
async function checkOutcome(
  mirror: CaseMirror,
  source: Source,
  served: Served,
  report: SyncReport,
  before: string | null,
  why: (what: string) => string,
): Promise<void> {
  if (report.status === "failed") {
    // A repair runs after a walk that completed, so its failure leaves the walk's checkpoint: the
    // repair finds gaps by position, whatever the checkpoint says.
    const afterWalk = report.error?.message.startsWith("repair:") ?? false;
    if (!afterWalk)
      expect(
        (await mirror.store.readStream("feed")).checkpoint,
        why("a failed run must leave the checkpoint"),
      ).toBe(before);
    expect(report.error?.message ?? "", why("a failed run must say why")).not.toBe("");
    return;
  }
  expect(report.status, why("the run must fail or succeed")).toBe("success");
  const mirrored = new Set(await mirror.ids());
  const quarantined = new Set(await mirror.quarantined());
  // Only the newest page, which has nothing to be checked against, can hide bookings unnoticed: to
  // the walk they were not there yet (the next run reads them, as healing checks).
  const unseen = (id: string) => served.hiddenAtTop.has(id) && !served.feedIds.has(id);
  const lost = source.bookings
    .map((b) => b.id)
    .filter((id) => !unseen(id) && !mirrored.has(id) && !(served.broken.has(id) && quarantined.has(id)));
  expect(lost, why("a successful run lost bookings")).toEqual([]);
}

function sortedIds(source: Source): string[] {
  return source.bookings.map((b) => b.id).sort();
}

async function missingFrom(mirror: CaseMirror, source: Source): Promise<string[]> {
  const mirrored = new Set(await mirror.ids());
  return sortedIds(source).filter((id) => !mirrored.has(id));
}

/**
 * Runs on PostgreSQL: a fifth of SQLite's (and the cases found before, all of them), whose count
 * stays. Each page there is a few round trips, so the full count would take minutes; the store's
 * rule is the planner both execute (test/mirror-plan.test.ts), and these runs prove PostgreSQL's
 * execution of it under the feed's misbehaviours.
 */
const runsOn = (backend: Backend, n: number) => (backend.kind === "sqlite" ? n : Math.ceil(n / 5));

describeBackends("the sync against a misbehaving feed (property)", (backend) => {
  const mirrors = propertyMirrors(backend);
  it("the healthy model: one sync mirrors every booking, at either precision and cursor rule", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => play(mirrors, { ...c, presync: false, fault: { kind: "none" } })),
      { seed: SEED, numRuns: runsOn(backend, 40) },
    );
  });

  it(
    "never loses a booking silently: fails loudly with the checkpoint unmoved, or mirrors every one",
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, (c) => play(mirrors, c)),
        { seed: SEED, numRuns: runsOn(backend, NUM_RUNS), examples: FOUND },
      );
    },
    Math.max(60_000, NUM_RUNS * 400),
  );
});
