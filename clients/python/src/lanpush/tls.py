"""Certificate pinning for a gateway with a self-signed certificate (docs/PROTOCOL.md, "Pairing": `fp` is the hex
SHA-256 of the certificate's DER).

No CA vouches for a gateway's self-signed certificate, so the context skips CA and host name verification and
instead compares the SHA-256 of the certificate the peer presented with the pinned one. The comparison runs
inside the TLS handshake (the context's `SSLObject`/`SSLSocket` classes check it right after the handshake
completes), so nothing — not even the WebSocket upgrade request — is sent to a peer with another certificate,
and a peer that presents no certificate fails too: it fails closed.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import ssl
from typing import Optional


class FingerprintMismatch(ssl.SSLCertVerificationError):
    """The peer's certificate is not the pinned one."""


def normalize_fingerprint(fingerprint: str) -> str:
    """Lowercase hex without separators (`AB:CD:…` from `openssl x509 -fingerprint` works too)."""
    fp = re.sub(r"[\s:]", "", fingerprint).lower()
    if not re.fullmatch(r"[0-9a-f]{64}", fp):
        raise ValueError(f"not a SHA-256 fingerprint (64 hex digits): {fingerprint!r}")
    return fp


def fingerprint_of(der: bytes) -> str:
    """The fingerprint lanpushd publishes: the hex SHA-256 of the certificate's DER."""
    return hashlib.sha256(der).hexdigest()


def check_peer(ssl_object: object, fingerprint: str) -> None:
    """Raises `FingerprintMismatch` unless the peer's certificate has `fingerprint` (normalized)."""
    getpeercert = getattr(ssl_object, "getpeercert", None)
    der: Optional[bytes] = getpeercert(binary_form=True) if getpeercert else None
    if not der:
        raise FingerprintMismatch("the gateway presented no certificate")
    got = fingerprint_of(der)
    if not hmac.compare_digest(got, fingerprint):
        raise FingerprintMismatch(f"certificate fingerprint {got} is not the pinned {fingerprint}")


def pinned_context(fingerprint: str) -> ssl.SSLContext:
    """A client context that accepts exactly the certificate with this SHA-256 (hex), whoever signed it."""
    pin = normalize_fingerprint(fingerprint)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the pin replaces the CA check; see _Pinned* below

    class PinnedSSLObject(ssl.SSLObject):  # asyncio (websockets) wraps its connections in SSLObjects
        def do_handshake(self) -> None:
            super().do_handshake()
            check_peer(self, pin)

    class PinnedSSLSocket(ssl.SSLSocket):  # blocking sockets (urllib, http.client) use SSLSockets
        def do_handshake(self, block: bool = False) -> None:
            super().do_handshake(block)
            check_peer(self, pin)

    context.sslobject_class = PinnedSSLObject
    context.sslsocket_class = PinnedSSLSocket
    context.lanpush_fingerprint = pin  # type: ignore[attr-defined]
    return context
