import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LanpushClient } from "../src/client.js";
import type { ClientEvents } from "../src/events.js";
import { fingerprintOf, normalizeFingerprint, pinnedSocketFactory, redeemPinnedPairing, WsConstructor } from "../src/node/pinning.js";
import { PairingError } from "../src/pairing.js";
import { MemoryStore } from "../src/store.js";
import { sleep } from "./support/fakes.js";
import { clientView, eventually, Fleet, Gateway } from "./support/gateway.js";
import { WASHER } from "./support/payloads.js";

/**
 * The Node entry's pinning against lanpushd's own TLS (`tls.enabled`: a self-signed certificate made at first start,
 * its SHA-256 in the pairing URL), through Debian's `ws` package as a user's `import WebSocket from "ws"` would be.
 */

const WebSocket: WsConstructor = (await import("/usr/share/nodejs/ws/index.js" as string)).default;

const fleet = new Fleet();

/** A gateway that serves TLS (plain stays open on loopback only, for the test's own admin requests). */
function tlsGateway(): Promise<Gateway> {
  return fleet.gateway({ devices: ["phone"], extra: ["tls: {enabled: true, plain: false}"] });
}

async function pairingURL(gw: Gateway, device: string): Promise<string> {
  const made = await gw.request("POST", "/v1/pairings", { device });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.url.replace(/^lanpush:\/\/[^/]+/, `lanpush://127.0.0.1:${gw.port}`);
}

function fingerprintIn(url: string): string {
  const fp = /[?&]fp=([0-9a-f]+)/.exec(url)?.[1];
  assert.ok(fp, `no fp in ${url}`);
  return fp;
}

function otherThan(fp: string): string {
  return (fp[0] === "0" ? "1" : "0") + fp.slice(1);
}

describe("fingerprints", () => {
  test("hex in any case, with or without colons; anything else is refused", () => {
    const fp = fingerprintOf(new Uint8Array([1, 2, 3]));
    assert.match(fp, /^[0-9a-f]{64}$/);
    const colons = fp.toUpperCase().match(/../g)!.join(":");
    assert.equal(normalizeFingerprint(colons), fp);
    assert.throws(() => normalizeFingerprint(fp.slice(1)), /64 hex digits/);
    assert.throws(() => normalizeFingerprint(fp.slice(1) + "g"), /64 hex digits/);
  });

  test("nothing to pin, or a plain URL: refused before anything is sent", async () => {
    const e = await redeemPinnedPairing("lanpush://127.0.0.1:9/pair?code=X").catch((err) => err);
    assert.ok(e instanceof PairingError && /no fingerprint/.test(e.message), String(e));
    const factory = pinnedSocketFactory("ab".repeat(32), WebSocket);
    assert.throws(() => factory("ws://127.0.0.1:9/v1/stream", ["lanpush.v2"]), /needs a wss:\/\/ URL/);
  });
});

describe("pinning against lanpushd's TLS", { concurrency: false }, () => {
  test("a pairing URL redeems over https pinned to its fp, and the client streams over wss", async () => {
    const gw = await tlsGateway();
    const url = await pairingURL(gw, "hall");
    const paired = await redeemPinnedPairing(url);
    assert.equal(paired.deviceId, "hall");
    assert.equal(paired.fingerprint, fingerprintIn(url));
    assert.equal(paired.url, `wss://127.0.0.1:${gw.port}/v1/stream`);

    const c = fleet.client(
      new LanpushClient({
        url: paired.url,
        token: paired.token,
        createSocket: pinnedSocketFactory(paired.fingerprint, WebSocket),
        store: new MemoryStore(),
      }),
    );
    c.start();
    await eventually(() => assert.equal(c.status, "live"));
    for (const step of WASHER.slice(0, 2)) await gw.push("hall", step);
    const want = await gw.activities("hall");
    await eventually(() => assert.deepEqual(clientView(c.state.activities.washer_cycle), clientView(want.washer_cycle)));
  });

  test("another fingerprint: the pairing code is never sent, and a client never gets in", async () => {
    const gw = await tlsGateway();
    const url = await pairingURL(gw, "hall");
    const fp = fingerprintIn(url);
    const wrongURL = url.replace(`fp=${fp}`, `fp=${otherThan(fp)}`);
    const refused = await redeemPinnedPairing(wrongURL).catch((e) => e);
    assert.ok(refused instanceof PairingError && refused.status === null, String(refused));
    assert.match(refused.message, new RegExp(`certificate fingerprint ${fp} is not the pinned ${otherThan(fp)}`));
    // The code is still unused: the refused attempt wrote nothing to the gateway.
    const paired = await redeemPinnedPairing(url);

    const c = fleet.client(
      new LanpushClient({
        url: paired.url,
        token: paired.token,
        createSocket: pinnedSocketFactory(otherThan(fp), WebSocket),
        store: new MemoryStore(),
        backoff: { initial: 50, max: 100 },
      }),
    );
    const statuses: ClientEvents["status"][] = [];
    c.on("status", (s) => void statuses.push(s));
    c.start();
    await eventually(() => assert.ok(statuses.filter((s) => s.status === "offline").length >= 2, JSON.stringify(statuses)));
    await sleep(200);
    assert.ok(!statuses.some((s) => s.status === "live"), JSON.stringify(statuses));
    for (const s of statuses.filter((s) => s.status === "offline")) assert.match(s.detail.reason ?? "", /is not the pinned/);
    const listed = (await gw.request("GET", "/v1/devices")).body.devices.find((d: { id: string }) => d.id === "hall");
    assert.equal(listed.connected, false);
  });
});
