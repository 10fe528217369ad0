import assert from "node:assert/strict";
import { test } from "node:test";
import { LanpushClient } from "../src/client.js";
import { EventFrame, parseFrame } from "../src/protocol.js";
import { reduce } from "../src/reducer.js";
import { DeviceState } from "../src/state.js";
import { MemoryStore } from "../src/store.js";
import { FakeSocket, FakeTimers, flush } from "./support/fakes.js";
import { loadVectors, Vector } from "./support/vectors.js";

const sets: { version: "lanpush.v1" | "lanpush.v2"; vectors: Vector[] }[] = [
  { version: "lanpush.v1", vectors: loadVectors("v1") },
  { version: "lanpush.v2", vectors: loadVectors("v2") },
];
const [v1, v2] = sets.map((s) => s.vectors);
const SCENARIOS = ["snapshot", "start", "merged-updates", "end", "lifecycle", "notifications", "clear", "replay-after-resume", "new-epoch", "out-of-window-merge"];
const ACTIVITY_FRAMES = new Set(["start", "update", "end", "lifecycle"]);

/** What the client makes of a recorded frame: it reads the wire text, as it would off the socket. */
function read(frame: unknown): EventFrame {
  const parsed = parseFrame(JSON.stringify(frame));
  assert.ok(parsed, `unreadable frame ${JSON.stringify(frame)}`);
  return parsed as EventFrame;
}

const frameSteps = (v: Vector) => v.steps.filter((s): s is Extract<typeof s, { frame: unknown }> => "frame" in s);

test("the protocol vectors are there", () => {
  const names = v1.map((v) => v.name);
  for (const name of SCENARIOS) assert.ok(names.includes(name), `missing vector ${name}`);
  for (const v of v1) for (const step of frameSteps(v)) assert.ok(!Array.isArray(step.frame), `${v.name}: a v1 frame is an object`);
});

test("the lanpush.v2 vectors are there: the same scenarios, the frames about an activity as arrays", () => {
  assert.ok(v2.length >= 10, `${v2.length} vectors in Tests/Fixtures/protocol/v2, expected at least 10`);
  const names = v2.map((v) => v.name);
  for (const name of SCENARIOS) assert.ok(names.includes(name), `missing v2 vector ${name}`);
  let arrays = 0;
  for (const v of v2) {
    assert.equal(v.protocol, "lanpush.v2", `${v.name}: protocol`);
    for (const step of frameSteps(v)) {
      const activityFrame = ACTIVITY_FRAMES.has(read(step.frame).type);
      assert.equal(Array.isArray(step.frame), activityFrame, `${v.name}: ${JSON.stringify(step.frame)}`);
      if (activityFrame) arrays += 1;
    }
  }
  assert.ok(arrays > 0, "no array frame in the v2 vectors");
});

test("each v2 vector is its v1 vector: the same steps, states and acks; its frames read as the v1 frames", () => {
  for (const vector of v2) {
    const twin = v1.find((v) => v.name === vector.name);
    if (!twin) continue;
    assert.deepEqual(vector.initial, twin.initial, `${vector.name}: initial`);
    assert.equal(vector.steps.length, twin.steps.length, `${vector.name}: steps`);
    vector.steps.forEach((step, i) => {
      const other = twin.steps[i];
      if ("subscribe" in step || "subscribe" in other) return assert.deepEqual(step, other, `${vector.name} step ${i}`);
      assert.deepEqual(read(step.frame), other.frame, `${vector.name} step ${i}: frame`);
      assert.deepEqual({ now: step.now, state: step.state, ack: step.ack }, { now: other.now, state: other.state, ack: other.ack }, `${vector.name} step ${i}`);
    });
  }
});

for (const { version, vectors } of sets) {
  for (const vector of vectors) {
    test(`reducer (${version}): ${vector.name}`, () => {
      let state: DeviceState = vector.initial;
      vector.steps.forEach((step, i) => {
        if ("subscribe" in step) {
          const want = state.epoch === null ? { type: "subscribe" } : { type: "subscribe", epoch: state.epoch, seq: state.seq };
          assert.deepEqual(step.subscribe, want, `step ${i}: the resume point`);
          return;
        }
        const frame = read(step.frame);
        const result = reduce(state, frame, { now: step.now });
        assert.equal(result.resync, undefined, `step ${i}: ${result.resync}`);
        assert.deepEqual(result.state, step.state, `step ${i} (${frame.type} ${"seq" in frame ? frame.seq : ""}): state`);
        assert.equal(result.ack, step.ack, `step ${i}: ack`);
        state = result.state;
      });
    });

    test(`client over a socket (${version}): ${vector.name}`, async () => {
      const timers = new FakeTimers();
      let now = 0;
      const sockets: FakeSocket[] = [];
      const store = new MemoryStore();
      const client = new LanpushClient({
        url: "ws://gateway.test/v1/stream",
        token: "t",
        store,
        createSocket: (url, protocols) => {
          const s = new FakeSocket(url, protocols);
          sockets.push(s);
          return s;
        },
        timers,
        now: () => now * 1000,
        keepaliveInterval: 0,
      });
      let highestAck = -1;
      for (const [i, step] of vector.steps.entries()) {
        now = step.now;
        if ("subscribe" in step) {
          if (sockets.length === 0) {
            client.start();
          } else {
            sockets[sockets.length - 1].serverClose(1001, "going away");
          }
          await flush();
          const socket = sockets[sockets.length - 1];
          socket.open();
          socket.receive({ type: "auth_required", version: "lanpush.v1" });
          await client.idle();
          assert.deepEqual(socket.sent.at(-1), { type: "auth", token: "t", version: "lanpush.v2" });
          socket.receive({ type: "auth_ok", device_id: "phone", epoch: "whatever", seq: 0, version });
          await client.idle();
          assert.deepEqual(socket.sent.at(-1), step.subscribe, `step ${i}: subscribe`);
          highestAck = -1;
          continue;
        }
        const socket = sockets[sockets.length - 1];
        const acksBefore = socket.sentOfType("ack").length;
        socket.receive(step.frame);
        await client.idle();
        assert.deepEqual(client.state, step.state, `step ${i}: state`);
        const acks = socket.sentOfType("ack");
        if (step.ack === null) {
          assert.equal(acks.length, acksBefore, `step ${i}: no ack for ${read(step.frame).type}`);
        } else {
          highestAck = Math.max(highestAck, step.ack);
          assert.deepEqual(acks.at(-1), { type: "ack", seq: highestAck }, `step ${i}: cumulative ack`);
          assert.deepEqual(store.load("lanpush:ws://gateway.test/v1/stream"), client.state, `step ${i}: persisted before the ack`);
        }
      }
      await client.stop();
    });
  }
}
