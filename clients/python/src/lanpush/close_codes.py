"""What a closed session means for the next attempt (docs/PROTOCOL.md "Close codes", docs/CLIENTS.md
"Reconnecting"). The frame the gateway sent just before closing decides too: `auth_invalid` means the token was
refused even when the close code got lost (wire detail 13)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# The least a client waits when the gateway has no room for another session (1013), in seconds.
TOO_MANY_SESSIONS_DELAY = 5.0
# 4029 without a readable "try again in N s": wait this long.
DEFAULT_RATE_LIMIT_WAIT = 30.0

_WAIT = re.compile(r"try again in\s+(\d+(?:\.\d+)?)\s*s", re.IGNORECASE)
# "too many sessions", "too many unauthenticated sessions from this address": both are 1013's reasons.
_TOO_MANY_SESSIONS = re.compile(r"too many [a-z ]*sessions", re.IGNORECASE)


@dataclass(frozen=True)
class CloseInfo:
    """How one session ended."""

    authed: bool = False
    code: Optional[int] = None
    reason: Optional[str] = None
    # `auth_invalid` was received on this session (its message).
    auth_invalid: Optional[str] = None
    # The last `error` frame's message on this session.
    last_error: Optional[str] = None


@dataclass(frozen=True)
class CloseAction:
    # "auth_rejected": the token is wrong, retrying cannot help (4001).
    # "reconnect_now": 1001 (gateway restart), 4002 (ack timeout), 4003 (too slow): come back at once, resume.
    # "wait": 4029, rate-limited for `seconds`.
    # "backoff": 1013 (at least `seconds`) and everything else.
    kind: str
    seconds: float = 0.0
    message: str = ""


def classify_close(info: CloseInfo) -> CloseAction:
    reason = info.reason or ""
    if info.auth_invalid is not None or info.code == 4001:
        return CloseAction("auth_rejected", message=info.auth_invalid or reason or "auth invalid")
    wait = _WAIT.search(reason)
    if info.code == 4029 or wait:
        return CloseAction("wait", seconds=float(wait.group(1)) if wait else DEFAULT_RATE_LIMIT_WAIT)
    if info.code == 1013 or _TOO_MANY_SESSIONS.search(reason) or _TOO_MANY_SESSIONS.search(info.last_error or ""):
        return CloseAction("backoff", seconds=TOO_MANY_SESSIONS_DELAY)
    if info.code in (1001, 4002, 4003):
        return CloseAction("reconnect_now")
    if info.code is None and re.search(r"ack timeout|too slow|shutdown|going away", reason, re.IGNORECASE):
        return CloseAction("reconnect_now")
    return CloseAction("backoff")
