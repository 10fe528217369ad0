import assert from "node:assert/strict";
import { test } from "node:test";
import { codeOf } from "../src/wall/pairing.js";

test("the wall takes the code of a pairing URL (parsed by the library), or a typed code as it is", () => {
  assert.equal(codeOf("  lanpush://127.0.0.1:8765/pair?code=ZXCV&alt=10.0.0.5:8765  "), "ZXCV");
  assert.equal(codeOf(" abcd-efgh "), "abcd-efgh", "the gateway normalizes a short code");
});
