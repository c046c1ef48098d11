/**
 * Checks, before the first page of a process reaches the core, that the configured API is the
 * source this mirror mirrors (source.ts). Cheap on the everyday path: the address is compared
 * without a request, and a first page that holds a booking the mirror holds proves the rest. Only a
 * first page that shares nothing with the mirror (another source, or more new bookings than a page)
 * costs one more request: the feed just after the bookings the mirror remembers its source by; and
 * only when those are gone too, two list-bookings requests for the source's oldest bookings. A
 * mirror with bookings but no record of its source (made before this check) is held to the same
 * evidence, its feed checkpoint standing in for the remembered bookings, before anything is remembered.
 */
import { ApiError, coerceError, findCause } from "../errors.js";
import { FEED_STREAMS } from "./feed/walk.js";
import { cursorFor, maxOf } from "./feed/window.js";
import type { Checked, PartnerApi, SyncDeps, SyncStore } from "./ports.js";
import {
  addressMismatch,
  bookingsMismatch,
  fingerprintOf,
  idsOf,
  isSourceRecord,
  SOURCE_STREAM,
  SourceMismatchError,
  type SourceRecord,
  saveSource,
  sourceAddress,
  unrecordedMismatch,
} from "./source.js";

/** What the check needs of the mirror. */
export type SourceStore = Pick<SyncStore, "readProgress" | "save" | "absentIds" | "countAccounted">;

export interface SourceGuardOptions extends Pick<SyncDeps<SourceStore>, "store" | "clock" | "logger"> {
  /** The configured API base URL. */
  baseUrl: string;
}

/** Feed records asked for just after the remembered bookings: they and a margin of neighbours. */
const PROBE_LIMIT = 20;
/** Bookings a page of the source's oldest holds, when the remembered ones are gone. */
const OLDEST_PAGE = 10;

type Records = readonly Checked<unknown>[];

/**
 * The API, checked against the mirror's source once per process, on its first request: a command
 * against another source fails with `SourceMismatchError` (exit 2) before the core sees a page.
 * A check that could not finish (a failed request) is made again by the next request.
 */
export function guardSource(api: PartnerApi, options: SourceGuardOptions): PartnerApi {
  let verified = false;
  let refusal: Error | undefined;
  let pending: Promise<void> | undefined;

  const guarded = async <P extends { records: Records }>(
    request: () => Promise<P>,
    signal: AbortSignal | undefined,
  ): Promise<P> => {
    while (pending) await pending;
    if (refusal) throw refusal;
    if (verified) return request();
    let page: P | undefined;
    const check = checkSource(api, options, signal, async () => {
      page = await request();
      return page.records;
    });
    pending = (async () => {
      try {
        await check;
        verified = true;
      } catch (err) {
        // Another source stays another source: every later request is refused alike.
        if (findCause(err, SourceMismatchError)) refusal = coerceError(err);
      } finally {
        pending = undefined;
      }
    })();
    await check;
    return page as P;
  };

  return {
    fetchRecent: (query, signal) => guarded(() => api.fetchRecent(query, signal), signal),
    listBookings: (query, signal) => guarded(() => api.listBookings(query, signal), signal),
  };
}

/**
 * Reads the first page through `first` and judges the source by it, asking more only when it does
 * not say. Throws `SourceMismatchError` for another source; remembers the source when none is.
 */
export async function checkSource(
  api: PartnerApi,
  o: SourceGuardOptions,
  signal: AbortSignal | undefined,
  first: () => Promise<Records>,
): Promise<void> {
  const remembered = await readSourceRecord(o.store);
  const sameSource = remembered !== null && sourceAddress(remembered.baseUrl) === sourceAddress(o.baseUrl);
  // A mirror without bookings has nothing to protect: it takes the source it is pointed at.
  if (remembered !== null && !sameSource && (await o.store.countAccounted()) > 0)
    throw addressMismatch(remembered, o.baseUrl);
  const records = await first();
  if (remembered === null) return recognise(api, o, signal, records);
  if (!sameSource || remembered.bookings.length === 0) {
    await learn(o, records, sameSource ? remembered : null);
    return;
  }
  if ((await vouch(o.store, records, remembered)) !== "none") return;
  // The next millisecond after the newest remembered booking serves the remembered ones first.
  const cursor = cursorFor(maxOf(remembered.bookings.map((b) => b.at)));
  const near = (await api.fetchRecent({ limit: PROBE_LIMIT, cursor }, signal)).records;
  const byNear = await vouch(o.store, near, remembered);
  if (byNear === "remembered") return;
  if (byNear === "known") return reanchor(o, remembered, near);
  const oldest = await oldestPage(api, signal);
  if ((await vouch(o.store, oldest, remembered)) !== "none") return reanchor(o, remembered, oldest);
  if ((await o.store.countAccounted()) === 0) return learn(o, records, null);
  throwIfServedNone([records, near, oldest]);
  throw bookingsMismatch(remembered, o.baseUrl);
}

/**
 * A source that served no booking at all in any probe proves nothing either way (an empty answer
 * for a moment, or a source emptied): the run fails as a failed read would, exit 1, and the next one
 * checks again, where a source serving other bookings is refused for good (exit 2).
 */
function throwIfServedNone(probes: readonly Records[]): void {
  if (probes.every((p) => idsOf(p).length === 0))
    throw new ApiError(
      "source check: the source served no bookings while the mirror holds some; nothing was read, and the next run checks again",
      { retryable: false },
    );
}

/**
 * The mirror's source as remembered; null when none is, or for a record this version did not write
 * (edited by hand, JSON or not), which the guard checks and remembers anew.
 */
export async function readSourceRecord(store: Pick<SyncStore, "readProgress">): Promise<SourceRecord | null> {
  try {
    const { progress } = await store.readProgress<unknown>(SOURCE_STREAM);
    return isSourceRecord(progress) ? progress : null;
  } catch (err) {
    if (findCause(err, SyntaxError)) return null;
    throw err;
  }
}

/**
 * No record of the source (a mirror made before sources were remembered, or a record edited by hand):
 * a mirror that holds bookings remembers the source only once it serves one of them, looked for where
 * a remembered source is (its first page, the feed just after the mirror's newest checkpoint, its
 * oldest page); a source that serves none is refused before the core stores a page of it.
 */
async function recognise(
  api: PartnerApi,
  o: SourceGuardOptions,
  signal: AbortSignal | undefined,
  records: Records,
): Promise<void> {
  const held = await o.store.countAccounted();
  // The everyday case costs no request: the command's own first page holds a booking the mirror holds.
  if (held === 0 || (await heldOf(o.store, records)).length > 0) return learn(o, records, null);
  const checkpoint = await newestCheckpoint(o.store);
  let near: Records = [];
  if (checkpoint !== null) {
    near = (await api.fetchRecent({ limit: PROBE_LIMIT, cursor: cursorFor(checkpoint) }, signal)).records;
    const known = await heldOf(o.store, near);
    if (known.length > 0) return learn(o, known, null);
  }
  const oldest = await oldestPage(api, signal);
  const known = await heldOf(o.store, oldest);
  if (known.length > 0) return learn(o, known, null);
  throwIfServedNone([records, near, oldest]);
  throw unrecordedMismatch(o.baseUrl, held);
}

/** The newest checkpoint of the feed's streams: below it the mirror holds what the source served. */
async function newestCheckpoint(store: SourceStore): Promise<string | null> {
  let newest: string | null = null;
  for (const stream of FEED_STREAMS) {
    const { checkpoint } = await store.readProgress(stream);
    if (checkpoint !== null && (newest === null || checkpoint > newest)) newest = checkpoint;
  }
  return newest;
}

/** The valid records of `records` whose booking the mirror holds. */
async function heldOf(store: SourceStore, records: Records): Promise<Records> {
  const ids = idsOf(records);
  if (ids.length === 0) return [];
  const absent = new Set(await store.absentIds(ids));
  return records.filter((r) => r.ok && !absent.has(r.id));
}

/**
 * What `records` say of the source: it serves a booking the mirror remembers it by, or one the mirror
 * holds (bookings are keyed by a unique `_id`, so another account's never are), or neither.
 */
async function vouch(
  store: SourceStore,
  records: Records,
  remembered: SourceRecord,
): Promise<"remembered" | "known" | "none"> {
  const ids = idsOf(records);
  if (ids.length === 0) return "none";
  const mine = new Set(remembered.bookings.map((b) => b.id));
  if (ids.some((id) => mine.has(id))) return "remembered";
  const absent = await store.absentIds(ids);
  return absent.length < ids.length ? "known" : "none";
}

/** The source's oldest bookings: list-bookings' last page, found from its first. */
async function oldestPage(api: PartnerApi, signal: AbortSignal | undefined): Promise<Records> {
  const head = await api.listBookings({ page: 1, pageSize: OLDEST_PAGE }, signal);
  const last = head.totalPages;
  if (!Number.isSafeInteger(last) || last <= 1) return head.records;
  return (await api.listBookings({ page: last, pageSize: OLDEST_PAGE }, signal)).records;
}

/** Remembers the configured source by the page's oldest bookings; keeps `kept`'s start when given. */
async function learn(o: SourceGuardOptions, records: Records, kept: SourceRecord | null): Promise<void> {
  const bookings = fingerprintOf(records);
  if (kept !== null && bookings.length === 0) return;
  const record: SourceRecord = {
    baseUrl: sourceAddress(o.baseUrl),
    bookings,
    since: kept?.since ?? o.clock.now().toISOString(),
  };
  if (await remember(o, record))
    o.logger.info(
      { source: record.baseUrl, bookings: bookings.map((b) => b.id) },
      "this mirror remembers its source: a command against another one is refused",
    );
}

/** The remembered bookings are gone, but the source serves bookings the mirror holds: remember those. */
async function reanchor(o: SourceGuardOptions, remembered: SourceRecord, records: Records): Promise<void> {
  const bookings = fingerprintOf(await heldOf(o.store, records));
  if (bookings.length === 0) return;
  o.logger.warn(
    { gone: remembered.bookings.map((b) => b.id), now: bookings.map((b) => b.id) },
    "the source no longer serves the bookings this mirror remembered it by, but serves others it holds: remembering those",
  );
  await remember(o, { ...remembered, bookings });
}

/** Stores the record beside the pages; a store that refuses it now is asked again by the next command. */
async function remember(o: SourceGuardOptions, record: SourceRecord): Promise<boolean> {
  try {
    await saveSource(o.store, record, o.clock.now().toISOString());
    return true;
  } catch (err) {
    o.logger.warn({ err }, "could not remember the source; the next command tries again");
    return false;
  }
}
