"""The gateway's text frames as the objects the rest of the client reads.

lanpush.v2 sends the frames about one activity (`start`, `update`, `end`, `lifecycle`) as arrays, `[type, seq, tag,
body]` or `[type, seq, tag, body, extras]`, and every other frame as lanpush.v1's object. Turning each array back
into its v1 object as soon as it is parsed keeps one form for everything after this module, so the reducer is the
same for both versions, and a client reads either form whatever version it asked for.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple, Type

# The v1 member each array's body stands for, and the JSON type it must have.
BODIES: Dict[str, Tuple[str, Type[Any]]] = {
    "start": ("state", dict),
    "update": ("patch", dict),
    "end": ("patch", dict),
    "lifecycle": ("phase", str),
}


def parse_frame(text: str) -> Optional[Dict[str, Any]]:
    """One text message as a v1 frame; None for anything unreadable (not JSON, an object without a string `type`,
    an array that is not a v2 frame), which the session skips."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list):
        return expand(value)
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None
    return value


def expand(items: List[Any]) -> Optional[Dict[str, Any]]:
    """A v2 array frame as its v1 object; None when the array is not one."""
    if len(items) not in (4, 5):
        return None
    kind, seq, tag, body = items[:4]
    extras = items[4] if len(items) == 5 else {}
    if not isinstance(kind, str) or kind not in BODIES:
        return None
    key, body_type = BODIES[kind]
    # bool is an int to Python but never a seq.
    if isinstance(seq, bool) or not isinstance(seq, (int, float)) or not isinstance(tag, str):
        return None
    if not isinstance(body, body_type) or not isinstance(extras, dict):
        return None
    # The positional members go last: extras only add members, they never make the frame another one.
    frame: Dict[str, Any] = {**extras, "type": kind, "seq": seq, "tag": tag, key: body}
    if kind == "update":
        # v2 leaves out an update's phase when it is "active"; v1 always has it.
        frame.setdefault("phase", "active")
    return frame
