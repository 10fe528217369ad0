import assert from "node:assert/strict";
import { test } from "node:test";
import { LanpushClient } from "../src/client.js";
import { reduce } from "../src/reducer.js";
import { DeviceState } from "../src/state.js";
import { MemoryStore } from "../src/store.js";
import { FakeSocket, FakeTimers, flush } from "./support/fakes.js";
import { loadVectors } from "./support/vectors.js";

const vectors = loadVectors();

test("the protocol vectors are there", () => {
  const names = vectors.map((v) => v.name);
  for (const name of ["snapshot", "start", "merged-updates", "end", "lifecycle", "notifications", "clear", "replay-after-resume", "new-epoch", "out-of-window-merge"]) {
    assert.ok(names.includes(name), `missing vector ${name}`);
  }
});

for (const vector of vectors) {
  test(`reducer: ${vector.name}`, () => {
    let state: DeviceState = vector.initial;
    let sessionAck = -1;
    vector.steps.forEach((step, i) => {
      if ("subscribe" in step) {
        const want = state.epoch === null ? { type: "subscribe" } : { type: "subscribe", epoch: state.epoch, seq: state.seq };
        assert.deepEqual(step.subscribe, want, `step ${i}: the resume point`);
        sessionAck = -1;
        return;
      }
      const result = reduce(state, step.frame, { now: step.now });
      assert.equal(result.resync, undefined, `step ${i}: ${result.resync}`);
      assert.deepEqual(result.state, step.state, `step ${i} (${step.frame.type} ${step.frame.seq ?? ""}): state`);
      assert.equal(result.ack, step.ack, `step ${i}: ack`);
      if (result.ack !== null) sessionAck = Math.max(sessionAck, result.ack);
      state = result.state;
    });
  });

  test(`client over a socket: ${vector.name}`, async () => {
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
        assert.deepEqual(socket.sent.at(-1), { type: "auth", token: "t" });
        socket.receive({ type: "auth_ok", device_id: "phone", epoch: "whatever", seq: 0, version: "lanpush.v1" });
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
        assert.equal(acks.length, acksBefore, `step ${i}: no ack for ${step.frame.type}`);
      } else {
        highestAck = Math.max(highestAck, step.ack);
        assert.deepEqual(acks.at(-1), { type: "ack", seq: highestAck }, `step ${i}: cumulative ack`);
        assert.deepEqual(store.load("lanpush:ws://gateway.test/v1/stream"), client.state, `step ${i}: persisted before the ack`);
      }
    }
    await client.stop();
  });
}
