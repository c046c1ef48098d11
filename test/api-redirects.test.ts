/**
 * The API client's redirect policy, over real HTTP on 127.0.0.1: a redirect within the configured
 * origin is followed; one to any other origin is refused before a request leaves for it, so the
 * token (and the walk) never go anywhere else.
 */
import type { PlainResponse } from "got";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { redirectTarget, sameOriginOnly } from "../src/api/redirects.js";
import { ConfigError } from "../src/errors.js";
import {
  type Answer,
  chain,
  client,
  closeServers,
  failure,
  okFeed,
  serve,
  TOKEN,
} from "./support/scripted-server.js";

afterEach(closeServers);

const redirect =
  (status: number, location: (req: { url: string }) => string): Answer =>
  (req, res) => {
    res.writeHead(status, { location: location({ url: req.url ?? "/" }) });
    res.end();
  };

describe("redirects", () => {
  it("refuses a redirect to another origin: the other server receives no request and never sees the token", async () => {
    const other = await serve(okFeed);
    const otherOrigin = new URL(other.baseUrl).origin;
    const api = await serve(redirect(301, (req) => `${otherOrigin}${req.url}`));
    const { api: c, lines } = client(api.baseUrl, { maxRetries: 3 });
    const err = await failure(c.fetchRecent({ limit: 10 }));
    expect(err.message).toBe(
      `fetch-recent-bookings: the API answered a redirect to ${otherOrigin} ` +
        `(HTTP 301 to ${otherOrigin}/api/v2/partner/booking/fetch-recent-bookings); ` +
        `booking-sync follows none outside ${new URL(api.baseUrl).origin}: set BOOKING_API_BASE_URL to the final address`,
    );
    expect(err.status).toBe(301);
    expect(err.retryable).toBe(false);
    expect(api.hits).toHaveLength(1);
    expect(other.hits).toHaveLength(0);
    expect([chain(err), ...lines].join("\n")).not.toContain(TOKEN);
  });

  it.each([
    ["a protocol-relative location", (o: string) => `//${o.slice("http://".length)}/api/v2/x`],
    [
      "localhost for 127.0.0.1 (same machine, another origin)",
      (o: string) => o.replace("127.0.0.1", "localhost"),
    ],
  ])("refuses %s", async (_what, target) => {
    const other = await serve(okFeed);
    const api = await serve(redirect(307, () => target(new URL(other.baseUrl).origin)));
    const { api: c } = client(api.baseUrl);
    const err = await failure(c.listBookings({ page: 1, pageSize: 10 }));
    expect(err.message).toMatch(
      /^list-bookings: the API answered a redirect to http:\/\/(127\.0\.0\.1|localhost):\d+ /,
    );
    expect(other.hits).toHaveLength(0);
  });

  it("refuses a redirect to another port of the same host", async () => {
    const api = await serve(
      redirect(302, () => "http://127.0.0.1:1/api/v2/partner/booking/fetch-recent-bookings"),
    );
    const err = await failure(client(api.baseUrl).api.fetchRecent({ limit: 10 }));
    expect(err.message).toContain("redirect to http://127.0.0.1:1 (HTTP 302");
    expect(api.hits).toHaveLength(1);
  });

  it("follows a redirect within the same origin, with the token, and reads the page it leads to", async () => {
    const api = await serve(
      redirect(308, (req) => req.url.replace("/api/v2/", "/api/v2.1/")),
      okFeed,
    );
    const page = await client(api.baseUrl).api.fetchRecent({ limit: 10 });
    expect(page.records).toHaveLength(1);
    expect(page.records[0]).toMatchObject({ ok: true, id: "b1" });
    expect(api.hits.map((h) => h.url.pathname)).toEqual([
      "/api/v2/partner/booking/fetch-recent-bookings",
      "/api/v2.1/partner/booking/fetch-recent-bookings",
    ]);
    expect(api.hits.map((h) => h.headers.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
  });

  it("gives up on a redirect loop within the origin at once, without retrying it", async () => {
    const api = await serve(redirect(302, (req) => req.url));
    const err = await failure(client(api.baseUrl, { maxRetries: 3 }).api.fetchRecent({ limit: 10 }));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/redirect/i);
    // got's limit of 10 redirects, once: the first request and 10 more.
    expect(api.hits).toHaveLength(11);
  });

  it.each([
    ["https://api.example/x", "https://api.example", true],
    ["https://api.example:443/x", "https://api.example", true],
    ["/other/path", "https://api.example", true],
    ["http://api.example/x", "https://api.example", false],
    ["https://api.example:8443/x", "https://api.example", false],
    ["https://evil.example/x", "https://api.example", false],
    ["https://api.example.evil.example/x", "https://api.example", false],
  ])(
    "follows %s from %s: %s (the scheme counts, which got's own check ignores)",
    (location, origin, follows) => {
      const res = {
        statusCode: 302,
        headers: { location },
        url: `${origin}/api/v2/q`,
      } as unknown as PlainResponse;
      expect(sameOriginOnly(origin)(res)).toBe(follows);
      expect(redirectTarget({ ...res, statusCode: 200 })).toBeUndefined();
    },
  );
});

describe("the client's own guard", () => {
  it("refuses a base URL with credentials (got would send them as Basic auth), without echoing them", () => {
    let err: unknown;
    try {
      createApiClient({ baseUrl: "https://u:hunter2-pw@partner.example/api/v2", token: TOKEN });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(
      "API base URL has credentials in it: https://***@partner.example/api/v2",
    );
  });
});
