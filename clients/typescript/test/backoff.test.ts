import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff } from "../src/backoff.js";
import { classifyClose } from "../src/closeCodes.js";

test("backoff doubles up to its ceiling and starts over after a reset", () => {
  const b = new Backoff({ initial: 500, max: 8000, jitter: 0 });
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => b.next()), [500, 1000, 2000, 4000, 8000, 8000]);
  b.reset();
  assert.equal(b.next(), 500);
});

test("backoff jitter keeps each delay within [d·(1−jitter), d]", () => {
  let r = 0;
  const randoms = [0, 0.999, 0.5];
  const b = new Backoff({ initial: 1000, max: 60_000, jitter: 0.5 }, () => randoms[r++ % randoms.length]);
  const delays = Array.from({ length: 9 }, () => b.next());
  const ceilings = [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000];
  delays.forEach((d, i) => {
    assert.ok(d <= ceilings[i] && d >= ceilings[i] * 0.5, `delay ${i}: ${d} for ceiling ${ceilings[i]}`);
  });
  assert.notEqual(delays[0] / ceilings[0], delays[1] / ceilings[1], "jittered, not fixed");
});

test("close codes: what the next attempt does", () => {
  assert.deepEqual(classifyClose({ code: 4001, reason: "auth invalid" }), { kind: "auth_rejected", message: "auth invalid" });
  assert.deepEqual(classifyClose({ authInvalid: "invalid token" }), { kind: "auth_rejected", message: "invalid token" }, "known from the frame when the transport has no code");
  assert.deepEqual(classifyClose({ code: 4029, reason: "rate-limited: try again in 12 s" }), { kind: "wait", seconds: 12 });
  assert.deepEqual(classifyClose({ reason: "try again in 2.5s" }), { kind: "wait", seconds: 2.5 });
  assert.equal(classifyClose({ code: 1013, reason: "too many sessions" }).kind, "backoff");
  assert.ok((classifyClose({ lastError: "too many sessions" }) as { minimum: number }).minimum >= 5000);
  for (const code of [1001, 4002, 4003]) assert.deepEqual(classifyClose({ code }), { kind: "reconnect_now" });
  assert.deepEqual(classifyClose({ code: 1006 }), { kind: "backoff", minimum: 0 });
});
