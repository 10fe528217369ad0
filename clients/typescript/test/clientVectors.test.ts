import assert from "node:assert/strict";
import { test } from "node:test";
import { LanpushClient } from "../src/client.js";
import { CloseAction, classifyClose } from "../src/closeCodes.js";
import { PairingError, readPairing } from "../src/pairing.js";
import { FakeSocket, FakeTimers, flush } from "./support/fakes.js";
import { loadClientVector } from "./support/vectors.js";

/** The client rules shared with the Python and Swift libraries (Tests/Fixtures/protocol/client). */

interface CloseCase {
  why?: string;
  close: { code: number | null; reason: string; auth_invalid?: string; last_error?: string };
  action: CloseAction["kind"];
  delay: number | null;
  message?: string;
}

const closeCodes = loadClientVector<{ cases: CloseCase[] }>("close-codes");

test("close codes: every code the gateway sends, and one it does not, decides the next attempt", () => {
  const codes = new Set(closeCodes.cases.map((c) => c.close.code));
  for (const code of [4001, 4002, 4003, 4029, 1001, 1011, 1013, 1009, 1003, null]) assert.ok(codes.has(code), `no case for ${code}`);
  for (const c of closeCodes.cases) {
    const { code, reason, auth_invalid, last_error } = c.close;
    const action = classifyClose({ code: code ?? undefined, reason, authInvalid: auth_invalid, lastError: last_error });
    const label = `${code} ${JSON.stringify(reason)} (${c.why ?? ""})`;
    assert.equal(action.kind, c.action, label);
    // The library keeps milliseconds for the backoff's minimum and seconds for a wait.
    if (action.kind === "wait") assert.equal(action.seconds, c.delay, label);
    if (action.kind === "backoff") assert.equal(action.minimum / 1000, c.delay, label);
    if (action.kind === "reconnect_now") assert.equal(c.delay, 0, label);
    if (action.kind === "auth_rejected") assert.equal(action.message, c.message, label);
  }
});

interface PairingCase {
  why: string;
  input: string;
  given?: { address?: string; fingerprint?: string };
  read?: { address: string; alternates: string[]; code: string; fingerprint: string | null };
  error?: true;
}

const pairing = loadClientVector<{ cases: PairingCase[] }>("pairing");

test("pairing: what a pairing URL or a typed code names, or why it is refused", () => {
  assert.ok(pairing.cases.some((c) => c.error) && pairing.cases.some((c) => c.read));
  for (const c of pairing.cases) {
    const label = `${c.why}: ${JSON.stringify(c.input)}`;
    if (c.error) {
      assert.throws(() => readPairing(c.input, c.given), (e: unknown) => e instanceof PairingError && e.status === null, label);
      continue;
    }
    const read = readPairing(c.input, c.given);
    assert.deepEqual(
      { address: read.addresses[0], alternates: read.addresses.slice(1), code: read.code, fingerprint: read.fingerprint },
      c.read,
      label,
    );
  }
});

interface AckCase {
  name: string;
  reads: { frames: object[]; acks: number[] }[];
}

const acks = loadClientVector<{ now: number; window: number; cases: AckCase[] }>("acks");

for (const c of acks.cases) {
  test(`acks: ${c.name}`, async () => {
    const timers = new FakeTimers();
    const sockets: FakeSocket[] = [];
    const client = new LanpushClient({
      url: "ws://gateway.test/v1/stream",
      token: "t",
      window: acks.window,
      createSocket: (url, protocols) => {
        const s = new FakeSocket(url, protocols);
        sockets.push(s);
        return s;
      },
      timers,
      now: () => acks.now * 1000,
      keepaliveInterval: 0,
    });
    client.start();
    await flush();
    const socket = sockets[0];
    socket.open();
    socket.receive({ type: "auth_required", version: "lanpush.v1" });
    await client.idle();
    socket.receive({ type: "auth_ok", device_id: "phone", epoch: "e", seq: 0, version: "lanpush.v1" });
    await client.idle();
    assert.deepEqual(socket.sent.at(-1), { type: "subscribe" });
    for (const [i, read] of c.reads.entries()) {
      const before = socket.sentOfType("ack").length;
      // One read: every frame is delivered before the client handles the first.
      for (const frame of read.frames) socket.receive(frame);
      await client.idle();
      await flush();
      assert.deepEqual(socket.sentOfType("ack").slice(before).map((a) => a.seq), read.acks, `read ${i}`);
    }
    await client.stop();
  });
}
