"""The pure reducer: one server frame applied to a device's state, with the events a UI drives from.

Every language's client must agree with it on the shared protocol vectors (docs/CLIENTS.md, "Protocol vectors");
the numbered wire details cited below are that document's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from .events import (ActivityChanged, ActivityDismissed, ActivityEnded, NotificationReceived, NotificationsCleared,
                     NotificationsDropped, ReplayStarted, SnapshotApplied, StateEvent, Synced)
from .merge_patch import clone, json_equal, merge_patch
from .state import Activity, DeviceState, HeldNotification

Frame = Mapping[str, Any]

# Plain notifications held at most (the oldest go first): the gateway's queue holds about as many.
DEFAULT_MAX_NOTIFICATIONS = 100


@dataclass
class ReduceResult:
    state: DeviceState
    events: List[StateEvent] = field(default_factory=list)
    # The seq to acknowledge once the events were handled; None when the frame needs no ack.
    ack: Optional[int] = None
    # Set when the frame cannot be applied to what the client holds (an update of an activity it never saw): the
    # client must drop its resume point and subscribe afresh to get a snapshot (wire detail 8).
    resync: Optional[str] = None


def reduce(state: DeviceState, frame: Frame, *, now: float, device: str = "",
           max_notifications: int = DEFAULT_MAX_NOTIFICATIONS) -> ReduceResult:
    """Applies `frame` to `state` at time `now` (Unix seconds). Pure: `state` is not modified; unchanged
    activities are shared with it."""
    r = _Reduction(state, now, device, max_notifications)
    r.apply(frame)
    return ReduceResult(state=r.next, events=r.events, ack=r.ack, resync=r.resync)


class _Reduction:
    def __init__(self, prev: DeviceState, now: float, device: str, max_notifications: int) -> None:
        self.prev = prev
        self.now = now
        self.device = device
        self.max_notifications = max_notifications
        self.next: DeviceState = {"epoch": prev["epoch"], "seq": prev["seq"],
                                  "activities": dict(prev["activities"]), "notifications": prev["notifications"]}
        self.events: List[StateEvent] = []
        self.ack: Optional[int] = None
        self.resync: Optional[str] = None

    def apply(self, f: Frame) -> None:
        kind = f.get("type")
        if kind == "snapshot":
            self.snapshot(f)
            return
        if kind == "replay":
            self.next["epoch"] = f["epoch"]
            self.events.append(ReplayStarted(self.device, f["epoch"], f.get("from", 0)))
            return
        if kind == "synced":  # never acknowledged (wire detail 1)
            self.events.append(Synced(self.device, f.get("seq", 0)))
            return
        if kind == "notifications_dropped":  # no seq of its own, no ack
            self.events.append(NotificationsDropped(self.device, f.get("count", 0), f.get("through", 0)))
            return
        if kind == "start":
            self.start(f)
        elif kind == "update":
            self.update(f)
        elif kind == "end":
            self.end(f)
        elif kind == "lifecycle":
            self.lifecycle(f["tag"], f["phase"])
        elif kind == "notification":
            n: HeldNotification = {"seq": f["seq"], "data": clone(f.get("data") or {})}
            if "title" in f:
                n["title"] = f["title"]
            if "message" in f:
                n["message"] = f["message"]
            self.notification(n)
        elif kind == "clear":
            self.clear(f["tag"])
        else:
            return
        self.next["seq"] = max(self.next["seq"], f["seq"])
        self.ack = f["seq"]

    def gone(self, phase: str, dismissal_date: Optional[float]) -> bool:
        """Wire detail 5: dismissed, or ended with a dismissal date that is not after now."""
        return phase == "dismissed" or (phase == "ended" and dismissal_date is not None and dismissal_date <= self.now)

    def put(self, tag: str, current: Optional[Activity], cause: str, alert: Optional[Dict[str, Any]] = None,
            silent: bool = False) -> None:
        previous = self.prev["activities"].get(tag)
        if current is not None:
            self.next["activities"][tag] = current
        else:
            self.next["activities"].pop(tag, None)
        if previous is None and current is None:
            return
        self.events.append(ActivityChanged(self.device, tag, previous, current, cause, alert, silent))

    def snapshot(self, f: Frame) -> None:
        """A snapshot replaces the activities only; the notifications held are kept (wire detail 3)."""
        epoch, seq = f["epoch"], f["seq"]
        self.next["epoch"] = epoch
        self.next["seq"] = seq
        self.ack = seq  # harmless, and it lets a quiet device's notifications be pruned (wire detail 1)
        incoming: Dict[str, Activity] = {}
        for a in f.get("activities") or []:
            if not self.gone(a["phase"], a.get("dismissal_date")):
                incoming[a["tag"]] = from_wire(a, a["phase"])
        for tag in sorted(set(self.prev["activities"]) | set(incoming)):
            previous = self.prev["activities"].get(tag)
            current = incoming.get(tag)
            if previous is not None and current is not None and json_equal(previous, current):
                continue
            self.put(tag, current, "snapshot")
            if current is not None and current["phase"] == "ended" and (previous is None or previous["phase"] != "ended"):
                self.events.append(ActivityEnded(self.device, tag, current))
            if current is None and previous is not None:
                self.events.append(ActivityDismissed(self.device, tag, previous))
        self.events.append(SnapshotApplied(self.device, epoch, seq))

    def start(self, f: Frame) -> None:
        """A start replaces whatever the client holds under the tag (wire detail 6)."""
        tag = f["tag"]
        phase = f.get("phase", "active")
        previous = self.prev["activities"].get(tag)
        if self.gone(phase, f.get("dismissal_date")):
            # Started and gone while the client was away: nothing to show; whatever it held under the tag is over.
            if previous is not None:
                self.put(tag, None, "start")
                self.events.append(ActivityDismissed(self.device, tag, previous))
            return
        activity = from_wire(f, phase)
        self.put(tag, activity, "start", alert=f.get("alert"))
        if activity["phase"] == "ended":
            self.events.append(ActivityEnded(self.device, tag, activity))

    def update(self, f: Frame) -> None:
        tag = f["tag"]
        held = self.prev["activities"].get(tag)
        if held is None or held["phase"] == "ended":
            self.resync = f"update of '{tag}' (seq {f['seq']}) that the client does not hold live"
            return
        nxt: Activity = dict(held)  # type: ignore[assignment]
        nxt["state"] = merge_patch(held["state"], f.get("patch") or {})
        # An update makes a stale activity active again unless it says otherwise.
        nxt["phase"] = "stale" if f.get("phase") == "stale" else "active"
        copy_optional(f, nxt)
        self.put(tag, nxt, "update", alert=f.get("alert"), silent=bool(f.get("silent")))

    def end(self, f: Frame) -> None:
        tag = f["tag"]
        held = self.prev["activities"].get(tag)
        if held is None:
            self.resync = f"end of '{tag}' (seq {f['seq']}) that the client does not hold"
            return
        ended: Activity = dict(held)  # type: ignore[assignment]
        ended["state"] = merge_patch(held["state"], f.get("patch") or {})
        ended["phase"] = "ended"
        if "dismissal_date" in f:  # an end of an ended activity moves its dismissal date (wire detail 7)
            ended["dismissal_date"] = f["dismissal_date"]
        copy_optional(f, ended)
        if self.gone("dismissed" if f.get("phase") == "dismissed" else "ended", ended.get("dismissal_date")):
            # Ended and dismissed at once (a clear_notification, as on the phone): the final view, then gone.
            self.put(tag, None, "end")
            self.events.append(ActivityEnded(self.device, tag, ended))
            self.events.append(ActivityDismissed(self.device, tag, ended))
            return
        self.put(tag, ended, "end")
        self.events.append(ActivityEnded(self.device, tag, ended))

    def lifecycle(self, tag: str, phase: str) -> None:
        held = self.prev["activities"].get(tag)
        if held is None:  # a lifecycle for a tag the client does not hold is ignored (wire detail 8)
            return
        if phase == "dismissed":
            self.put(tag, None, "lifecycle")
            self.events.append(ActivityDismissed(self.device, tag, held))
            return
        if phase == "ended":
            ended: Activity = dict(held)  # type: ignore[assignment]
            ended["phase"] = "ended"
            self.put(tag, ended, "lifecycle")
            self.events.append(ActivityEnded(self.device, tag, ended))
            return
        if held["phase"] == "ended" or held["phase"] == phase:
            return
        changed: Activity = dict(held)  # type: ignore[assignment]
        changed["phase"] = phase
        self.put(tag, changed, "lifecycle")

    def notification(self, n: HeldNotification) -> None:
        # A snapshot is preceded by the queued notifications the client "may not have": skip the ones it has
        # (wire detail 3).
        if any(h["seq"] == n["seq"] and same_notification(h, n) for h in self.prev["notifications"]):
            return
        held = list(self.prev["notifications"]) + [n]
        if len(held) > self.max_notifications:
            held = held[len(held) - self.max_notifications:]
        self.next["notifications"] = held
        self.events.append(NotificationReceived(self.device, n))

    def clear(self, tag: str) -> None:
        """Removes the held notifications whose `data.tag` is the frame's tag (wire detail 4)."""
        removed = [n for n in self.prev["notifications"] if n["data"].get("tag") == tag]
        if removed:
            self.next["notifications"] = [n for n in self.prev["notifications"] if n["data"].get("tag") != tag]
        self.events.append(NotificationsCleared(self.device, tag, removed))


def from_wire(a: Frame, phase: str) -> Activity:
    activity: Activity = {
        "tag": a["tag"],
        "attributes": clone(a["attributes"]),
        "state": clone(a.get("state") or {}),
        "phase": "ended" if phase == "dismissed" else phase,
    }
    for key in ("stale_date", "relevance_score", "dismissal_date"):
        if key in a:
            activity[key] = a[key]  # type: ignore[literal-required,unused-ignore]
    return activity


def copy_optional(f: Frame, activity: Activity) -> None:
    """`update` and `end` carry `stale_date` / `relevance_score` only when the activity has one; absent means
    unchanged (wire detail 7). A `null` (which the gateway does not send today) is read as "none any more", as in
    a merge patch, so the state never holds a null where the vectors have no key."""
    for key in ("stale_date", "relevance_score"):
        if key in f:
            if f[key] is None:
                activity.pop(key, None)  # type: ignore[misc]
            else:
                activity[key] = f[key]  # type: ignore[literal-required,unused-ignore]


def same_notification(a: HeldNotification, b: HeldNotification) -> bool:
    return (a.get("title") == b.get("title") and a.get("message") == b.get("message")
            and json_equal(a["data"], b["data"]))
