"""Where a device client keeps its resume point and the state it describes, so a restarted client resumes by
replay instead of starting from nothing.

`save` is awaited before the frames it covers are acknowledged: an acknowledged plain notification is gone from
the gateway, so it must already be stored (docs/CLIENTS.md, wire detail 9).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Dict, Optional, Protocol, Union

from .state import DeviceState, is_device_state


class StateStore(Protocol):
    """A store's three operations; each may be a plain method or a coroutine."""

    def load(self, key: str) -> Union[Optional[DeviceState], Awaitable[Optional[DeviceState]]]: ...

    def save(self, key: str, state: DeviceState) -> Union[None, Awaitable[None]]: ...

    def clear(self, key: str) -> Union[None, Awaitable[None]]: ...


class MemoryStore:
    """Keeps the state for the life of the process (tests, clients that need no resume across restarts)."""

    def __init__(self) -> None:
        self._states: Dict[str, str] = {}

    def load(self, key: str) -> Optional[DeviceState]:
        text = self._states.get(key)
        return None if text is None else json.loads(text)

    def save(self, key: str, state: DeviceState) -> None:
        # Serialized, so a caller that mutates its objects later cannot change what was saved.
        self._states[key] = json.dumps(state)

    def clear(self, key: str) -> None:
        self._states.pop(key, None)


class JSONFileStore:
    """One JSON file per key in `directory`, replaced atomically (write, fsync, rename): a power cut leaves the
    old state or the new one, never half of each. A file that cannot be read back (another version, a torn
    write on a filesystem without atomic rename) counts as nothing stored: the client then gets a snapshot.

    `fsync=False` skips the flush to the medium (fewer writes on an SD card); a crash of the machine may then
    lose the last saves, which costs at most a snapshot on the next start — but notifications acknowledged after
    the last durable save are lost.
    """

    def __init__(self, directory: Union[str, "os.PathLike[str]"], fsync: bool = True) -> None:
        self.directory = Path(directory).expanduser()
        self.fsync = fsync

    def path(self, key: str) -> Path:
        """A readable file name for the key, with a short hash so keys that differ only in odd characters do not
        share a file."""
        readable = re.sub(r"[^A-Za-z0-9._-]+", "_", key).strip("_")[:80] or "state"
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        return self.directory / f"{readable}-{digest}.json"

    def load(self, key: str) -> Optional[DeviceState]:
        try:
            value: Any = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if is_device_state(value) else None

    def save(self, key: str, state: DeviceState) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.path(key), state, fsync=self.fsync)

    def clear(self, key: str) -> None:
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            pass


def write_json_atomically(target: Path, value: Any, *, fsync: bool = True, indent: Optional[int] = None) -> None:
    """Writes `value` as JSON to a temporary file beside `target` (mode 0600, as `mkstemp` makes it) and renames it
    over `target`, so a reader sees the old file or the new one, never half of one. With `fsync`, the data and then
    the directory entry reach the disk before it returns."""
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=indent, separators=None if indent else (",", ":"), ensure_ascii=False)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if fsync:
        # The rename itself is durable only once the directory entry is.
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
