/** The pure parts of push: the backoff, the message's bytes, the secrets, the URL rule. */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.js";
import { retryDelay } from "../src/events/backoff.js";
import { buildMessage, messageId, randomTag } from "../src/events/message.js";
import { parseSecrets, signer } from "../src/events/sign.js";
import { webhookUrlProblem } from "../src/events/webhook-url.js";
import { testSecret } from "./support/webhook-receiver.js";

const NOW = new Date("2026-11-27T10:00:00.000Z");
const inSeconds = (s: number) => new Date(NOW.getTime() + s * 1000).toUTCString();

describe("retryDelay", () => {
  it.each([
    // attempts, Retry-After, random, ms
    [1, undefined, 0, 500],
    [1, undefined, 0.5, 750],
    [0, undefined, 0, 500],
    [2, undefined, 0, 1000],
    [3, undefined, 0.5, 3000],
    [10, undefined, 0, 256_000],
    // 1 s · 2^10 passes the 10 min cap; jitter applies to the cap.
    [11, undefined, 0, 300_000],
    [11, undefined, 0.999_999, 600_000],
    [1_000, undefined, 0.5, 450_000],
    [1, "120", 0, 120_000],
    [1, " 3 ", 0, 3000],
    [1, "0", 0, 500],
    [1, inSeconds(30), 0, 30_000],
    [1, inSeconds(-30), 0.5, 750],
    // Capped at 1 h, in either form.
    [1, "7200", 0, 3_600_000],
    [1, inSeconds(86_400), 0, 3_600_000],
    // The longer of the two: a backoff already past the ask wins.
    [11, "5", 0, 300_000],
    [1, "soon", 0, 500],
    [1, "", 0, 500],
  ] as const)("after %s failed attempts, Retry-After %j, random %s: %s ms", (attempts, header, r, ms) => {
    expect(retryDelay(attempts, header, NOW, () => r)).toBe(ms);
  });
});

describe("webhook message", () => {
  const events = [
    {
      id: 7,
      type: "booking.created",
      bookingId: "B-1",
      at: "2026-11-27T10:00:00.000Z",
      data: '{"booking":{"paid":true}}',
    },
    {
      id: 9,
      type: "booking.changed",
      bookingId: 'B-"2',
      at: "2026-11-27T10:00:01.000Z",
      data: '{"booking":{"paid":false},"changes":[{"field":"paid","old":"1","new":"0"}]}',
    },
  ];

  it("has fixed bytes, its events served with their columns first, the last event's time as its timestamp", () => {
    const message = buildMessage(events, null, "0a1b2c3d");
    expect(message).toEqual({
      id: "msg_7_9_0a1b2c3d",
      first: 7,
      last: 9,
      replay: null,
      body:
        '{"type":"booking.events","timestamp":"2026-11-27T10:00:01.000Z","data":{"events":[' +
        '{"id":7,"type":"booking.created","bookingId":"B-1","at":"2026-11-27T10:00:00.000Z","booking":{"paid":true}},' +
        '{"id":9,"type":"booking.changed","bookingId":"B-\\"2","at":"2026-11-27T10:00:01.000Z",' +
        '"booking":{"paid":false},"changes":[{"field":"paid","old":"1","new":"0"}]}]}}',
    });
    expect(buildMessage(events, null, "0a1b2c3d")).toEqual(message);
    expect(JSON.parse(message.body).data.events.map((e: { id: number }) => e.id)).toEqual([7, 9]);
  });

  it("names a replay's message apart from the live one carrying the same events", () => {
    expect(buildMessage(events, 3, "0a1b2c3d").id).toBe("msg_7_9_replay3_0a1b2c3d");
    expect(buildMessage(events, 3, "0a1b2c3d").body).toBe(buildMessage(events, null, "0a1b2c3d").body);
    expect(messageId(1, 1, null, "ffffffff")).toBe("msg_1_1_ffffffff");
  });

  it("tags a new message with 8 random hex characters: a new mirror's ids never repeat an old one's", () => {
    const tags = Array.from({ length: 100 }, () => randomTag());
    for (const tag of tags) expect(tag).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(tags).size).toBe(100);
  });
});

describe("webhook secrets", () => {
  it("reads one or more whsec_ secrets separated by spaces", () => {
    expect(parseSecrets(` ${testSecret(1)}\n${testSecret(2)}  `)).toEqual([testSecret(1), testSecret(2)]);
  });

  it.each([
    ["", "is empty"],
    ["   ", "is empty"],
    ["c2VjcmV0", "does not start with whsec_"],
    [`${testSecret(1)} whsec_!!notbase64!!`, "(secret 2 of 2) is not base64"],
    ["whsec_YWJ", "cannot be used"],
  ])("refuses %j, naming the setting and never the value", (text, says) => {
    let error: unknown;
    try {
      parseSecrets(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain("EVENTS_WEBHOOK_SECRET");
    expect(message).toContain(says);
    for (const part of text.split(/\s+/).filter((p) => p.length > 6))
      expect(message).not.toContain(part.slice(6));
  });

  it("signs with every secret, so a receiver that knows either one verifies the message", () => {
    const sign = signer([testSecret(1), testSecret(2)]);
    const at = new Date();
    const header = sign("msg_1_1", at, "{}");
    expect(header.split(" ")).toHaveLength(2);
    const headers = {
      "webhook-id": "msg_1_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": header,
    };
    for (const secret of [testSecret(1), testSecret(2)]) {
      expect(() => new Webhook(secret).verify("{}", headers)).not.toThrow();
    }
    expect(() => new Webhook(testSecret(3)).verify("{}", headers)).toThrow(/No matching signature/);
  });
});

describe("webhook URL", () => {
  it.each([
    ["https://app.example/hooks", false, undefined],
    ["http://127.0.0.1:8080/hooks", false, undefined],
    ["http://127.9.9.9/hooks", false, undefined],
    ["http://localhost/hooks", false, undefined],
    ["http://[::1]:9000/hooks", false, undefined],
    ["http://10.0.0.5/hooks?token=abc", false, "plain http to http://10.0.0.5"],
    ["http://app.example/hooks", false, "EVENTS_WEBHOOK_ALLOW_INSECURE=true"],
    ["http://app.example/hooks", true, undefined],
    ["ftp://app.example/hooks", true, "not an http(s) URL"],
    ["not a url", false, "not an http(s) URL"],
  ] as const)("%s (allow insecure: %s): %s", (url, allow, problem) => {
    const said = webhookUrlProblem(url, allow);
    if (problem === undefined) expect(said).toBeUndefined();
    else {
      expect(said).toContain(problem);
      expect(said).not.toContain("token=abc");
    }
  });
});
