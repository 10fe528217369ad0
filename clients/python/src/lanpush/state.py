"""What a device client holds: the resume point and the picture it describes.

Everything keeps the wire's snake_case names, exactly as the protocol vectors spell it out
(`Tests/Fixtures/protocol/*.json`), so a frame, the client's state and a vector read the same. The types are
`TypedDict`s: the values are plain dicts, ready for `json.dumps` and a store.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

JSONObject = Dict[str, Any]


class ActivityAttributes(TypedDict, total=False):
    """The static half of an activity: set by the payload that started it, never changed."""

    tag: str
    title: str
    started_at: float
    webhook_id: str


class _ActivityRequired(TypedDict):
    tag: str
    attributes: ActivityAttributes
    # The content state (HA's payload fields: `message`, `progress`, `template`, ...).
    state: JSONObject
    # "active" | "stale" | "ended"; never "dismissed" (a dismissed activity is removed).
    phase: str


class Activity(_ActivityRequired, total=False):
    """One activity as the client holds it: what a UI renders. Times are Unix seconds."""

    stale_date: float
    relevance_score: float
    dismissal_date: float


class _NotificationRequired(TypedDict):
    seq: int
    data: JSONObject


class HeldNotification(_NotificationRequired, total=False):
    """A plain notification, held until a `clear` with its tag (or the app) removes it."""

    title: str
    message: str


class DeviceState(TypedDict):
    """The resume point (`epoch`, `seq` = the highest seq applied) and the picture it describes."""

    epoch: Optional[str]
    seq: int
    activities: Dict[str, Activity]
    notifications: List[HeldNotification]


def empty_state() -> DeviceState:
    return {"epoch": None, "seq": 0, "activities": {}, "notifications": []}


def sorted_activities(state: DeviceState) -> List[Activity]:
    """Live activities first, then by relevance (higher first), then newest start: the order a phone shows them."""

    def key(a: Activity) -> Any:
        return (
            1 if a["phase"] == "ended" else 0,
            -float(a.get("relevance_score", 0)),
            -float(a["attributes"].get("started_at", 0)),
            a["tag"],
        )

    return sorted(state["activities"].values(), key=key)


def is_device_state(value: Any) -> bool:
    """Whether a stored value looks like a `DeviceState` (a store may hold anything after a version change)."""
    return (
        isinstance(value, dict)
        and (value.get("epoch") is None or isinstance(value.get("epoch"), str))
        and "epoch" in value
        and isinstance(value.get("seq"), int)
        and not isinstance(value.get("seq"), bool)
        and isinstance(value.get("activities"), dict)
        and isinstance(value.get("notifications"), list)
    )
