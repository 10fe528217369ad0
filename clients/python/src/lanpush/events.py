"""The events a UI drives from, in frame order. Each is a small frozen dataclass with a `type` (the same names as
the TypeScript library's events), so handlers can be registered by name (`client.on("activity", ...)`) and
`async for` loops can `match` on the class.

Every state event names its `device`: the client's own, or for observers the frame's `device_id`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Union

from .state import Activity, HeldNotification

# `connecting` until the session is synced, `live` while it is, `offline` between attempts,
# `auth_rejected` for good.
CONNECTING = "connecting"
LIVE = "live"
OFFLINE = "offline"
AUTH_REJECTED = "auth_rejected"


@dataclass(frozen=True)
class ActivityChanged:
    """An activity's previous and new view. `current` is None once it is gone (dismissed)."""

    type: ClassVar[str] = "activity"
    device: str
    tag: str
    previous: Optional[Activity]
    current: Optional[Activity]
    # Why: "snapshot" | "start" | "update" | "end" | "lifecycle".
    cause: str
    # Belongs to this one event: show it once, never replay it.
    alert: Optional[Dict[str, Any]] = None
    silent: bool = False


@dataclass(frozen=True)
class ActivityEnded:
    """The activity ended (or an ended one got a new dismissal date): show it until `dismissal_date`."""

    type: ClassVar[str] = "ended"
    device: str
    tag: str
    activity: Activity


@dataclass(frozen=True)
class ActivityDismissed:
    """The activity is gone: its last view."""

    type: ClassVar[str] = "dismissed"
    device: str
    tag: str
    activity: Activity


@dataclass(frozen=True)
class NotificationReceived:
    type: ClassVar[str] = "notification"
    device: str
    notification: HeldNotification


@dataclass(frozen=True)
class NotificationsCleared:
    """A `clear`: the held notifications whose `data.tag` is `tag` were removed."""

    type: ClassVar[str] = "clear"
    device: str
    tag: str
    removed: List[HeldNotification]


@dataclass(frozen=True)
class NotificationsDropped:
    """The gateway's notification queue for this device overflowed: `count` notifications up to seq `through`
    will never arrive."""

    type: ClassVar[str] = "notifications_dropped"
    device: str
    count: int
    through: int


@dataclass(frozen=True)
class SnapshotApplied:
    type: ClassVar[str] = "snapshot"
    device: str
    epoch: str
    seq: int


@dataclass(frozen=True)
class ReplayStarted:
    type: ClassVar[str] = "replay"
    device: str
    epoch: str
    from_seq: int


@dataclass(frozen=True)
class Synced:
    """Everything up to the subscribe-time seq has been delivered: the client is live."""

    type: ClassVar[str] = "synced"
    device: str
    seq: int


@dataclass(frozen=True)
class StatusChanged:
    type: ClassVar[str] = "status"
    status: str
    previous: str
    code: Optional[int] = None
    reason: Optional[str] = None
    # Seconds until the next attempt (status "offline").
    retry_in: Optional[float] = None


@dataclass(frozen=True)
class AuthRejected:
    """The token was refused (4001 / `auth_invalid`): the client stopped and will not retry."""

    type: ClassVar[str] = "auth_rejected"
    message: str
    code: Optional[int] = None


@dataclass(frozen=True)
class Registered:
    type: ClassVar[str] = "registered"
    push_token: Optional[str]
    supports_live_activities: Optional[bool] = None


@dataclass(frozen=True)
class DeviceChanged:
    """Observers: a device's sessions or registration changed (the `GET /v1/devices` entry in `info`)."""

    type: ClassVar[str] = "device"
    device: str
    info: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientError:
    """A gateway `error` frame, a failed handler, or a resynchronization. Informational: the client carries on."""

    type: ClassVar[str] = "error"
    message: str
    error: Optional[BaseException] = None


StateEvent = Union[
    ActivityChanged, ActivityEnded, ActivityDismissed, NotificationReceived, NotificationsCleared,
    NotificationsDropped, SnapshotApplied, ReplayStarted, Synced,
]
Event = Union[StateEvent, StatusChanged, AuthRejected, Registered, DeviceChanged, ClientError]

EVENT_CLASSES = (
    ActivityChanged, ActivityEnded, ActivityDismissed, NotificationReceived, NotificationsCleared,
    NotificationsDropped, SnapshotApplied, ReplayStarted, Synced, StatusChanged, AuthRejected, Registered,
    DeviceChanged, ClientError,
)
EVENT_TYPES = frozenset(c.type for c in EVENT_CLASSES)
