"""lanpush client (lanpush.v2, and lanpush.v1 with an older gateway): a device's Home Assistant Live Activities
and notifications from a lanpush gateway on the LAN, resumable across restarts (docs/PROTOCOL.md, docs/CLIENTS.md)."""
from .backoff import Backoff
from .blocking import BlockingClient
from .client import LanpushClient
from .close_codes import CloseAction, CloseInfo, classify_close
from .events import (AUTH_REJECTED, CONNECTING, LIVE, OFFLINE, ActivityChanged, ActivityDismissed, ActivityEnded,
                     AuthRejected, ClientError, DeviceChanged, Event, NotificationReceived, NotificationsCleared,
                     NotificationsDropped, Registered, ReplayStarted, SnapshotApplied, StateEvent, StatusChanged, Synced)
from .merge_patch import merge_patch
from .pairing import Credentials, PairingError, PairingURL, pair, redeem
from .reducer import ReduceResult, reduce
from .state import Activity, ActivityAttributes, DeviceState, HeldNotification, empty_state, sorted_activities
from .store import JSONFileStore, MemoryStore, StateStore
from .tls import FingerprintMismatch, fingerprint_of, pinned_context
from .transport import Transport, TransportClosed

__version__ = "0.1.0"

__all__ = [
    "AUTH_REJECTED", "CONNECTING", "LIVE", "OFFLINE", "Activity", "ActivityAttributes", "ActivityChanged",
    "ActivityDismissed", "ActivityEnded", "AuthRejected", "Backoff", "BlockingClient", "ClientError", "CloseAction",
    "CloseInfo", "Credentials", "DeviceChanged", "DeviceState", "Event", "FingerprintMismatch", "HeldNotification",
    "JSONFileStore", "LanpushClient", "MemoryStore", "NotificationReceived", "NotificationsCleared",
    "NotificationsDropped", "PairingError", "PairingURL", "ReduceResult", "Registered", "ReplayStarted",
    "SnapshotApplied", "StateEvent", "StateStore", "StatusChanged", "Synced", "Transport", "TransportClosed",
    "classify_close", "empty_state", "fingerprint_of", "merge_patch", "pair", "pinned_context", "redeem", "reduce",
    "sorted_activities",
]
