import { isObject, JSONObject, JSONValue } from "./protocol.js";

/**
 * RFC 7386 JSON Merge Patch. Returns a new value; `target` is never modified, so a view handed to an event
 * handler stays what it was.
 */
export function mergePatch(target: JSONValue | undefined, patch: JSONValue): JSONValue {
  if (!isObject(patch)) return clone(patch);
  const result: JSONObject = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete result[key];
    } else {
      result[key] = mergePatch(result[key], value);
    }
  }
  return result;
}

/** The patch that takes `from` to `to` (used by tests and by clients that diff views). */
export function diff(from: JSONObject, to: JSONObject): JSONObject {
  const patch: JSONObject = {};
  for (const key of Object.keys(from)) {
    if (!(key in to)) patch[key] = null;
  }
  for (const key of Object.keys(to)) {
    const a = from[key];
    const b = to[key];
    if (isObject(a) && isObject(b)) {
      const inner = diff(a, b);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (!deepEqual(a, b)) {
      patch[key] = clone(b);
    }
  }
  return patch;
}

export function clone<T extends JSONValue>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => clone(v)) as T;
  if (isObject(value)) {
    const out: JSONObject = {};
    for (const key of Object.keys(value)) out[key] = clone(value[key]);
    return out as T;
  }
  return value;
}

export function deepEqual(a: JSONValue | undefined, b: JSONValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}
