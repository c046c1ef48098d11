/**
 * What the client's own HTTP GET (api/http-get.ts) does that got did for it, over real HTTP on
 * 127.0.0.1: compressed pages decoded, a redirect loop stopped, a body that stalls timed out, and
 * one connection kept for the next request.
 */
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Answer,
  client,
  closeServers,
  failure,
  feed,
  okFeed,
  serve,
  summary,
} from "./support/scripted-server.js";

afterEach(closeServers);

const compressed =
  (encoding: string, compress: (b: Buffer) => Buffer): Answer =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
    res.end(compress(Buffer.from(JSON.stringify(feed([summary(7)])))));
  };

describe("the client's HTTP GET", () => {
  it.each([
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const)("decodes a %s page, and asks for compression", async (encoding, compress) => {
    const srv = await serve(compressed(encoding, compress));
    const page = await client(srv.baseUrl).api.fetchRecent({ limit: 10 });
    expect(page.records.map((r) => r.id)).toEqual(["b7"]);
    expect(srv.hits[0]?.headers["accept-encoding"]).toBe("gzip, deflate, br");
  });

  it("stops a redirect loop within the origin after 10 redirects, and does not retry it", async () => {
    const loop: Answer = (req, res) => {
      res.writeHead(302, { location: req.url ?? "/" });
      res.end();
    };
    const srv = await serve(loop);
    const err = await failure(client(srv.baseUrl, { maxRetries: 3 }).api.fetchRecent({ limit: 10 }));
    expect(err.message).toMatch(/Redirected 10 times\. Aborting\. \(ERR_TOO_MANY_REDIRECTS\)$/);
    expect(err.retryable).toBe(false);
    expect(srv.hits).toHaveLength(11);
  });

  it("times out a body that stops half way, and retries it", async () => {
    const stall: Answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"success":true,');
    };
    const srv = await serve(stall, okFeed);
    const { api, events } = client(srv.baseUrl, { timeoutMs: 200 });
    expect((await api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    expect(events[0]).toMatchObject({ outcome: "retry", status: undefined });
  });

  it("sends the next request over the same connection", async () => {
    const ports: (number | undefined)[] = [];
    const srv = await serve((req, res) => {
      ports.push(req.socket.remotePort);
      okFeed(req, res);
    });
    const { api } = client(srv.baseUrl);
    await api.fetchRecent({ limit: 10 });
    await api.fetchRecent({ limit: 10 });
    expect(ports).toHaveLength(2);
    expect(ports[1]).toBe(ports[0]);
  });
});
