import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff } from "../src/backoff.js";

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
