import assert from "node:assert/strict";
import { test } from "node:test";
import { diff, mergePatch } from "../src/mergePatch.js";

// RFC 7386, Appendix A: every example, target + patch → result.
const RFC_EXAMPLES: [unknown, unknown, unknown][] = [
  [{ a: "b" }, { a: "c" }, { a: "c" }],
  [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  [{ a: "b" }, { a: null }, {}],
  [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
  [{ a: ["b"] }, { a: "c" }, { a: "c" }],
  [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
  [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  [["a", "b"], ["c", "d"], ["c", "d"]],
  [{ a: "b" }, ["c"], ["c"]],
  [{ a: "foo" }, null, null],
  [{ a: "foo" }, "bar", "bar"],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: "b", c: null }, { a: "b" }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

test("merge patch: the RFC 7386 examples", () => {
  for (const [target, patch, result] of RFC_EXAMPLES) {
    assert.deepEqual(mergePatch(target as any, patch as any), result, JSON.stringify({ target, patch }));
  }
});

test("merge patch never modifies its inputs", () => {
  const target = { message: "Rinsing", template: { progress: { value: 0.5 } } };
  const patch = { template: { progress: { value: 0.7 } }, message: null };
  const before = JSON.stringify(target);
  const out = mergePatch(target, patch) as any;
  assert.equal(JSON.stringify(target), before);
  assert.deepEqual(out, { template: { progress: { value: 0.7 } } });
  out.template.progress.value = 1;
  assert.equal(patch.template.progress.value, 0.7, "the result shares nothing with the patch");
});

test("diff is the inverse of merge patch", () => {
  const cases = [
    [{ message: "a", progress: 1 }, { message: "b" }],
    [{ template: { progress: { value: 0.5, style: "simple" } } }, { template: { progress: { value: 0.5, style: "segmented", segments: [{ value: 1 }] } } }],
    [{}, { a: { b: { c: 1 } } }],
  ];
  for (const [from, to] of cases) {
    assert.deepEqual(mergePatch(from as any, diff(from as any, to as any)), to);
  }
  assert.deepEqual(diff({ a: 1, b: { c: 1 } }, { a: 1, b: { c: 1 } }), {}, "no change, empty patch");
});
