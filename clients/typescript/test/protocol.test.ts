import assert from "node:assert/strict";
import { test } from "node:test";
import { parseFrame } from "../src/protocol.js";
import { toV2 } from "./support/v2.js";
import { loadVectors } from "./support/vectors.js";

const parse = (value: unknown) => parseFrame(JSON.stringify(value));

test("the protocol's examples: each array frame reads as its v1 object", () => {
  const examples: [string, object][] = [
    ['["update",12,"ev",{"progress":35}]', { patch: { progress: 35 }, phase: "active", seq: 12, tag: "ev", type: "update" }],
    ['["update",13,"ev",{},{"phase":"stale","silent":true}]', { patch: {}, phase: "stale", seq: 13, silent: true, tag: "ev", type: "update" }],
    ['["end",14,"ev",{"message":"done"},{"dismissal_date":1700000900}]', { dismissal_date: 1700000900, patch: { message: "done" }, seq: 14, tag: "ev", type: "end" }],
    [
      '["start",1,"ev",{"message":"hi"},{"attributes":{"started_at":1700000000,"tag":"ev","title":"EV"}}]',
      { attributes: { started_at: 1700000000, tag: "ev", title: "EV" }, seq: 1, state: { message: "hi" }, tag: "ev", type: "start" },
    ],
    ['["lifecycle",15,"ev","stale"]', { phase: "stale", seq: 15, tag: "ev", type: "lifecycle" }],
  ];
  for (const [text, v1] of examples) assert.deepEqual(parseFrame(text), v1, text);
});

test("every form: start with all its extras, update and end with theirs, an observer's device_id", () => {
  const attributes = { started_at: 1, tag: "w", title: "W", webhook_id: "h" };
  const alert = { title: "A", body: "B", sound: "default" };
  assert.deepEqual(parse(["start", 3, "w", { message: "m" }, { attributes, phase: "ended", dismissal_date: 9, stale_date: 5, relevance_score: 0.5, alert }]), {
    type: "start", seq: 3, tag: "w", state: { message: "m" }, attributes, phase: "ended", dismissal_date: 9, stale_date: 5, relevance_score: 0.5, alert,
  });
  assert.deepEqual(parse(["update", 4, "w", { progress: null }, { stale_date: null, relevance_score: 1, alert }]), {
    type: "update", seq: 4, tag: "w", patch: { progress: null }, phase: "active", stale_date: null, relevance_score: 1, alert,
  }, "no phase: active; a null stale_date stays (it removes the held one)");
  assert.deepEqual(parse(["end", 5, "w", {}, { dismissal_date: 6, phase: "dismissed" }]), {
    type: "end", seq: 5, tag: "w", patch: {}, dismissal_date: 6, phase: "dismissed",
  });
  assert.deepEqual(parse(["end", 5, "w", {}]), { type: "end", seq: 5, tag: "w", patch: {} }, "an end gets no phase of its own");
  assert.deepEqual(parse(["lifecycle", 7, "w", "dismissed", { device_id: "phone" }]), {
    type: "lifecycle", seq: 7, tag: "w", phase: "dismissed", device_id: "phone",
  });
  assert.deepEqual(parse(["update", 8, "w", {}, { device_id: "phone" }]), {
    type: "update", seq: 8, tag: "w", patch: {}, phase: "active", device_id: "phone",
  });
});

test("extras cannot make a frame another one: type, seq, tag and body are the array's", () => {
  assert.deepEqual(parse(["update", 8, "w", { a: 1 }, { type: "snapshot", seq: 99, tag: "x", patch: { b: 2 } }]), {
    type: "update", seq: 8, tag: "w", patch: { a: 1 }, phase: "active",
  });
});

test("objects read as before; anything else is unreadable", () => {
  assert.deepEqual(parseFrame('{"type":"synced","seq":3}'), { type: "synced", seq: 3 });
  for (const text of ["", "not json", "[", "null", "42", '"start"', "{}", '{"type":7}']) assert.equal(parseFrame(text), null, text);
});

test("malformed arrays are unreadable, like invalid JSON", () => {
  const malformed: unknown[] = [
    [],
    ["update"],
    ["update", 1, "t"],
    ["snapshot", 1, "t", {}],
    ["notification", 1, "t", {}],
    ["toString", 1, "t", {}],
    [null, 1, "t", {}],
    ["update", "1", "t", {}],
    ["update", null, "t", {}],
    ["update", 1, 7, {}],
    ["update", 1, null, {}],
    ["update", 1, "t", {}, null],
    ["update", 1, "t", {}, []],
    ["update", 1, "t", {}, "stale"],
    ["update", 1, "t", {}, {}, {}],
    ["update", 1, "t", "active"],
    ["update", 1, "t", null],
    ["update", 1, "t", [{}]],
    ["end", 1, "t", "dismissed"],
    ["start", 1, "t", []],
    ["start", 1, "t", "hi", { attributes: {} }],
    ["lifecycle", 1, "t", { phase: "stale" }],
    ["lifecycle", 1, "t", null],
    [["update"], 1, "t", {}],
  ];
  for (const a of malformed) assert.equal(parse(a), null, JSON.stringify(a));
});

test("every frame of the v1 vectors, in v2 form, reads back as itself", () => {
  let arrays = 0;
  for (const vector of loadVectors("v1")) {
    for (const step of vector.steps) {
      if (!("frame" in step)) continue;
      const v2 = toV2(step.frame);
      if (Array.isArray(v2)) arrays += 1;
      assert.deepEqual(parse(v2), step.frame, `${vector.name}: ${JSON.stringify(v2)}`);
    }
  }
  assert.ok(arrays > 20, `${arrays} array frames`);
});
