import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LanpushClient } from "../src/client.js";
import { PairingError, parsePairingURL, readPairing, redeemPairing } from "../src/pairing.js";
import { MemoryStore } from "../src/store.js";
import { clientView, eventually, Fleet } from "./support/gateway.js";
import { WASHER } from "./support/payloads.js";

/** Pairing URLs as the gateway makes them, redeemed against the real lanpushd with Node's own fetch. */

const fleet = new Fleet();
const gateway = () => fleet.gateway();

describe("pairing URLs", () => {
  // What a pairing URL or a typed code names is the shared vectors' (clientVectors.test.ts); here, the two entry points.
  test("parsePairingURL reads what readPairing reads from a URL, and is null for anything else", () => {
    const url = "lanpush://192.168.1.5:8765/pair?code=7K3M9QX2B8D4F6HJ&alt=10.0.0.2:8765";
    assert.deepEqual(parsePairingURL(url), readPairing(url));
    assert.equal(parsePairingURL("ABCD-EFGH"), null, "a short code");
    assert.equal(parsePairingURL("lanpush://h:1/pair?code=X&fp=abcd"), null, "a URL readPairing refuses");
  });

  test("a short code needs an address; an empty input is refused before anything is sent", async () => {
    const never = async () => assert.fail("nothing may be sent");
    await assert.rejects(redeemPairing("ABCD-EFGH", { fetch: never }), /needs the gateway's address/);
    await assert.rejects(redeemPairing("  ", { fetch: never, address: "h:1" }), /no pairing code/);
  });
});

describe("pairing against lanpushd", { concurrency: false }, () => {
  test("the URL redeems once, its token goes live, the state converges", async () => {
    const gw = await gateway();
    const made = await gw.request("POST", "/v1/pairings", { device: "hall", name: "Hall" });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // An unreachable alternative first: the pairing goes on to the next address.
    const url = made.body.url.replace(/^lanpush:\/\/[^/]+/, "lanpush://127.0.0.1:9") + `&alt=127.0.0.1:${gw.port}`;
    const paired = await redeemPairing(url, { fetch });
    assert.equal(paired.deviceId, "hall");
    assert.equal(paired.address, `127.0.0.1:${gw.port}`);
    assert.equal(paired.url, gw.url);
    assert.equal(paired.fingerprint, null, "no TLS here");

    const again = await redeemPairing(url, { fetch }).catch((e) => e);
    assert.ok(again instanceof PairingError && again.status === 403, String(again));

    const c = fleet.client(new LanpushClient({ url: paired.url, token: paired.token, store: new MemoryStore() }));
    c.start();
    await eventually(() => assert.equal(c.status, "live"));
    for (const step of WASHER.slice(0, 2)) await gw.push("hall", step);
    const want = await gw.activities("hall");
    await eventually(() => assert.deepEqual(clientView(c.state.activities.washer_cycle), clientView(want.washer_cycle)));
  });

  test("the short code redeems at a given address, in any case and with the hyphen", async () => {
    const gw = await gateway();
    const made = await gw.request("POST", "/v1/pairings", { device: "kitchen" });
    const paired = await redeemPairing(made.body.short_code.toLowerCase(), { fetch, address: `http://127.0.0.1:${gw.port}/` });
    assert.equal(paired.deviceId, "kitchen");
    assert.equal(paired.url, gw.url);
  });

  test("a wrong code is refused with the gateway's reason; past the limit the answer says when to retry", async () => {
    const gw = await gateway();
    const wrong = await redeemPairing("ZZZZ-ZZZZ", { fetch, address: `127.0.0.1:${gw.port}` }).catch((e) => e);
    assert.ok(wrong instanceof PairingError && wrong.status === 403 && /unknown/.test(wrong.message), String(wrong));
    let last: PairingError | null = null;
    for (let i = 0; i < 12 && last?.status !== 429; i++) {
      last = await redeemPairing("ZZZZ-ZZZZ", { fetch, address: `127.0.0.1:${gw.port}` }).catch((e) => e);
    }
    assert.equal(last?.status, 429, String(last));
    assert.ok(last!.retryAfter !== null && last!.retryAfter > 0, String(last?.retryAfter));
  });

  test("no gateway at any address: the error names the addresses tried", async () => {
    const e = await redeemPairing("lanpush://127.0.0.1:9/pair?code=X&alt=127.0.0.1:10", { fetch }).catch((err) => err);
    assert.ok(e instanceof PairingError && e.status === null && /127\.0\.0\.1:10/.test(e.message), String(e));
  });
});
