"""Pairing (docs/CLIENTS.md, "Pairing URL"): a one-time code from `lanpush pair` or `POST /v1/pairings` becomes a
device token, with no YAML and no token typed by hand.

    lanpush://HOST:PORT/pair?code=CODE[&fp=SHA256][&alt=HOST2:PORT2 ...]

The code is redeemed with `POST /v1/pair {"code"}` → `{"device_id", "token", "fingerprint"?}`. With a
fingerprint in the URL, the code goes over `https://` to the pinned certificate only — the answer carries the
device's token, which must not cross the LAN in the clear — and the stream is `wss://` with the same pin. A
fingerprint that only the answer carries (plain `http://`, the URL had none) is pinned from then on.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union
from urllib.parse import parse_qs, urlsplit

from .store import write_json_atomically
from .tls import normalize_fingerprint, pinned_context


class PairingError(Exception):
    """The gateway refused the code (`status` 400/403, or 429 with `retry_after` seconds), or no address of the
    pairing URL answered (`status` None)."""

    def __init__(self, message: str, status: Optional[int] = None, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class PairingURL:
    host: str  # "HOST:PORT" ("[v6]:PORT")
    code: str  # the 16-character code, or the typed short code ("ABCD-EFGH")
    fingerprint: Optional[str] = None
    alternatives: Tuple[str, ...] = ()

    @classmethod
    def read(cls, text: str, address: Optional[str] = None, fingerprint: Optional[str] = None) -> "PairingURL":
        """What a pairing names before it is redeemed: a pairing URL, or a code typed by hand (the short code, or the
        whole code) at the gateway's `address` ("HOST:PORT" or a URL of the gateway), pinned to `fingerprint` if
        given. Raises ValueError for input that names no gateway or no code, or a fingerprint no certificate has."""
        text = text.strip()
        if "://" in text:
            return cls.parse(text)
        if not text:
            raise ValueError("no pairing code: scan the pairing URL or type the short code")
        if not address:
            raise ValueError("a short code needs the gateway's address")
        # Sent as typed: the gateway reads it case-insensitively, hyphens and spaces ignored, I/L as 1 and O as 0.
        return cls(_host_port(address), text, normalize_fingerprint(fingerprint) if fingerprint else None)

    @classmethod
    def parse(cls, url: str) -> "PairingURL":
        parts = urlsplit(url.strip())
        if parts.scheme != "lanpush" or not parts.netloc or parts.path.rstrip("/") != "/pair":
            raise ValueError(f"not a pairing URL (lanpush://HOST:PORT/pair?code=...): {url!r}")
        query = parse_qs(parts.query)
        codes = query.get("code") or []
        if not codes or not codes[0]:
            raise ValueError("the pairing URL has no code")
        fps = query.get("fp") or []
        alternatives: List[str] = []
        for alt in query.get("alt", []):
            alternatives.extend(a for a in alt.split() if a)  # "&alt=a&alt=b" and "alt=a b" alike
        return cls(parts.netloc, codes[0], normalize_fingerprint(fps[0]) if fps else None, tuple(alternatives))

    @property
    def hosts(self) -> List[str]:
        """The addresses to try, in order, each once."""
        return list(dict.fromkeys((self.host, *self.alternatives)))


def _host_port(address: str) -> str:
    """`192.168.1.5:8765`, `http://192.168.1.5:8765/`, `ws://…/v1/stream` → `192.168.1.5:8765`."""
    return re.sub(r"^[a-z][a-z0-9+.-]*://", "", address.strip(), flags=re.IGNORECASE).split("/", 1)[0]


@dataclass(frozen=True)
class Credentials:
    """What a paired client keeps: who it is, its token, where the gateway answered and the pinned fingerprint."""

    device_id: str
    token: str
    host: str
    fingerprint: Optional[str] = None
    alternatives: Tuple[str, ...] = field(default=())

    @property
    def stream_url(self) -> str:
        return f"{'wss' if self.fingerprint else 'ws'}://{self.host}/v1/stream"

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"device_id": self.device_id, "token": self.token, "host": self.host}
        if self.fingerprint:
            out["fingerprint"] = self.fingerprint
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        return out

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> "Credentials":
        fp = value.get("fingerprint")
        return cls(str(value["device_id"]), str(value["token"]), str(value["host"]),
                   normalize_fingerprint(fp) if fp else None, tuple(value.get("alternatives") or ()))

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the credentials readable by this user only (the token is a password), replacing atomically."""
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(target, self.to_json(), indent=2)  # mode 0600: the token is a secret

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Credentials":
        return cls.from_json(json.loads(Path(path).expanduser().read_text(encoding="utf-8")))


def redeem(pairing: Union[str, PairingURL], *, timeout: float = 10.0) -> Credentials:
    """Redeems the code (blocking): tries the URL's address, then each `alt`, until one answers. A refusal ends
    it at once (the code is used up or wrong; trying it elsewhere would only count more failures)."""
    p = PairingURL.read(pairing) if isinstance(pairing, str) else pairing
    context = pinned_context(p.fingerprint) if p.fingerprint else None
    scheme = "https" if context is not None else "http"
    failures: List[str] = []
    for host in p.hosts:
        try:
            answer = _post(f"{scheme}://{host}/v1/pair", {"code": p.code}, context, timeout)
        except PairingError:
            raise
        except (OSError, ValueError) as error:  # unreachable, refused, TLS failure (pin mismatch), bad answer
            failures.append(f"{host}: {getattr(error, 'reason', None) or error}")
            continue
        return _credentials(answer, host, p)
    raise PairingError("no address of the pairing URL answered (" + "; ".join(failures) + ")")


async def pair(pairing: Union[str, PairingURL], *, timeout: float = 10.0) -> Credentials:
    """`redeem` without blocking the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: redeem(pairing, timeout=timeout))


def _post(url: str, body: Dict[str, Any], context: Optional[ssl.SSLContext], timeout: float) -> Dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    # No proxy from the environment: the gateway is on the LAN, and the pin must see the gateway's certificate.
    handlers: List[Any] = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            detail = json.loads(error.read()).get("message")
        except (ValueError, AttributeError):
            detail = None
        retry = error.headers.get("Retry-After") if error.headers else None
        raise PairingError(f"pairing refused ({error.code}): {detail or error.reason}", error.code,
                           float(retry) if retry and retry.replace(".", "", 1).isdigit() else None) from None
    if not isinstance(answer, dict):
        raise ValueError("the pairing answer is not a JSON object")
    return answer


def _credentials(answer: Dict[str, Any], host: str, p: PairingURL) -> Credentials:
    device_id, token = answer.get("device_id"), answer.get("token")
    if not isinstance(device_id, str) or not isinstance(token, str):
        raise PairingError("the pairing answer has no device_id and token")
    fingerprint = p.fingerprint
    answered = answer.get("fingerprint")
    if isinstance(answered, str) and answered:
        answered = normalize_fingerprint(answered)
        if fingerprint is not None and answered != fingerprint:
            # We reached the pinned certificate, so this cannot happen unless the gateway changed it mid-way.
            raise PairingError(f"the gateway answered fingerprint {answered}, the pairing URL pins {fingerprint}")
        fingerprint = answered
    others = tuple(h for h in p.hosts if h != host)
    return Credentials(device_id, token, host, fingerprint, others)
