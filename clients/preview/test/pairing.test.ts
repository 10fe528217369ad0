import assert from "node:assert/strict";
import { test } from "node:test";
import { codeOf, parsePairingURL } from "../src/wall/pairing.js";

test("pairing URLs: host, code, alternatives and fingerprint; anything else is a typed code", () => {
  assert.deepEqual(parsePairingURL("lanpush://192.168.1.5:8765/pair?code=0123456789ABCDEF&fp=ab12&alt=[fd00::5]:8765&alt=10.0.0.5:8765"), {
    host: "192.168.1.5:8765", code: "0123456789ABCDEF", fingerprint: "ab12", alternatives: ["[fd00::5]:8765", "10.0.0.5:8765"],
  });
  assert.equal(parsePairingURL("lanpush://gw.local:8765/pair?fp=ab"), null, "no code");
  assert.equal(parsePairingURL("https://gw.local/pair?code=X"), null, "another scheme");
  assert.equal(codeOf("  lanpush://127.0.0.1:8765/pair?code=ZXCV  "), "ZXCV");
  assert.equal(codeOf(" abcd-efgh "), "abcd-efgh", "the gateway normalizes a short code");
});
