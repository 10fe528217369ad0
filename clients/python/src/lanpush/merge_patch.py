"""RFC 7386 JSON Merge Patch, and the JSON helpers the reducer needs (copies, equality by JSON value)."""
from __future__ import annotations

from typing import Any, Dict


def merge_patch(target: Any, patch: Any) -> Any:
    """Applies `patch` to `target` and returns a new value; `target` is never modified, so a view handed to an
    event handler stays what it was."""
    if not isinstance(patch, dict):
        return clone(patch)
    result: Dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def clone(value: Any) -> Any:
    """A deep copy of a JSON value (dicts and lists; everything else is immutable)."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: numbers by value (1 == 1.0, as the protocol vectors compare them), but a boolean
    is never a number (Python's True == 1 is not JSON's)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b
