"""Certificate pinning, against local TLS servers with self-signed certificates made here (P-256, as lanpushd makes
its own): a stand-in gateway for `wss://` and a stand-in pairing endpoint for `https://`. lanpushd's TLS serving
is not on main yet; once it is, test_gateway_access.py can pair against the real one."""
import asyncio
import datetime
import http.server
import json
import ssl
import threading

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.asyncio.server import serve

from fakes import eventually
from lanpush import Backoff, FingerprintMismatch, LanpushClient, PairingError, pair, pinned_context
from lanpush.tls import check_peer, fingerprint_of, normalize_fingerprint


def self_signed(tmp_path, name):
    """A self-signed P-256 certificate (cert and key PEM files) and its fingerprint."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file, fingerprint_of(cert.public_bytes(serialization.Encoding.DER))


def server_context(cert_file, key_file):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context


class FakeGateway:
    """Just enough of lanpush.v1 over wss:// to get a client live; counts the upgrade requests it saw."""

    def __init__(self):
        self.requests = 0
        self.tokens = []

    def process_request(self, connection, request):
        self.requests += 1
        return None

    async def handler(self, ws):
        await ws.send(json.dumps({"type": "auth_required", "version": "lanpush.v1"}))
        auth = json.loads(await ws.recv())
        self.tokens.append(auth["token"])
        await ws.send(json.dumps({"type": "auth_ok", "device_id": "pi", "epoch": "e", "seq": 0}))
        assert json.loads(await ws.recv())["type"] == "subscribe"
        await ws.send(json.dumps({"type": "snapshot", "epoch": "e", "seq": 0, "activities": []}))
        await ws.send(json.dumps({"type": "synced", "seq": 0}))
        await ws.wait_closed()


@pytest.fixture
def certs(tmp_path):
    return self_signed(tmp_path, "gateway"), self_signed(tmp_path, "impostor")


async def test_a_pinned_client_connects_over_wss_to_the_self_signed_gateway(certs):
    (cert, key, fp), _ = certs
    gw = FakeGateway()
    async with serve(gw.handler, "127.0.0.1", 0, ssl=server_context(cert, key),
                     process_request=gw.process_request) as server:
        port = server.sockets[0].getsockname()[1]
        colons = ":".join(fp[i:i + 2] for i in range(0, 64, 2)).upper()  # `openssl x509 -fingerprint` style
        async with LanpushClient(f"wss://127.0.0.1:{port}/v1/stream", "tok", fingerprint=colons,
                                 keepalive_interval=None) as client:
            await eventually(lambda: _assert(client.status == "live"), 5)
    assert gw.tokens == ["tok"]


async def test_another_certificate_fails_closed_before_any_request(certs):
    (_, _, fp), (bad_cert, bad_key, _) = certs
    gw = FakeGateway()
    async with serve(gw.handler, "127.0.0.1", 0, ssl=server_context(bad_cert, bad_key),
                     process_request=gw.process_request) as server:
        port = server.sockets[0].getsockname()[1]
        client = LanpushClient(f"wss://127.0.0.1:{port}/v1/stream", "tok", fingerprint=fp,
                               backoff=Backoff(initial=0.05, maximum=0.1), keepalive_interval=None)
        errors = []
        client.on("error", errors.append)
        async with client:
            await eventually(lambda: _assert(len(errors) >= 2), 5)  # it keeps trying, and keeps refusing
            assert client.status != "live"
    assert all("fingerprint" in e.message and "not the pinned" in e.message for e in errors), errors
    assert gw.requests == 0 and gw.tokens == [], "not even the upgrade request reached the impostor"


async def test_an_unpinned_wss_client_still_verifies_certificates_against_cas(certs):
    (cert, key, _), _ = certs
    gw = FakeGateway()
    async with serve(gw.handler, "127.0.0.1", 0, ssl=server_context(cert, key),
                     process_request=gw.process_request) as server:
        port = server.sockets[0].getsockname()[1]
        client = LanpushClient(f"wss://127.0.0.1:{port}/v1/stream", "tok", keepalive_interval=None,
                               backoff=Backoff(initial=0.05, maximum=0.1))
        errors = []
        client.on("error", errors.append)
        async with client:
            await eventually(lambda: _assert(errors), 5)
    assert "CERTIFICATE_VERIFY_FAILED" in errors[0].message and gw.tokens == []


def test_fingerprints_are_64_hex_digits_and_a_pin_needs_wss():
    with pytest.raises(ValueError):
        normalize_fingerprint("abc")
    with pytest.raises(ValueError):
        LanpushClient("ws://127.0.0.1:1/v1/stream", "tok", fingerprint="a" * 64)
    with pytest.raises(FingerprintMismatch):
        check_peer(object(), "a" * 64)  # a peer without a certificate


class PairingHandler(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        PairingHandler.seen.append((self.path, body))
        answer = json.dumps({"device_id": "pi", "token": "new-token", "fingerprint": self.server.fp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


@pytest.fixture
def https_pairing(certs):
    (cert, key, fp), _ = certs
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PairingHandler)
    server.socket = server_context(cert, key).wrap_socket(server.socket, server_side=True)
    server.fp = fp
    PairingHandler.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, fp
    server.shutdown()
    server.server_close()


async def test_a_pairing_url_with_a_fingerprint_is_redeemed_over_pinned_https(https_pairing):
    server, fp = https_pairing
    host = f"127.0.0.1:{server.server_address[1]}"
    credentials = await pair(f"lanpush://{host}/pair?code=ABCDEFGHJKMNPQRS&fp={fp}")
    assert PairingHandler.seen == [("/v1/pair", {"code": "ABCDEFGHJKMNPQRS"})]
    assert (credentials.token, credentials.fingerprint) == ("new-token", fp)
    assert credentials.stream_url == f"wss://{host}/v1/stream"


async def test_a_pairing_url_pinning_another_certificate_sends_no_code(https_pairing, certs):
    server, _ = https_pairing
    _, (_, _, other_fp) = certs
    dead = "127.0.0.1:9"  # an `alt` that refuses: tried too, and refused
    url = f"lanpush://127.0.0.1:{server.server_address[1]}/pair?code=X&fp={other_fp}&alt={dead}"
    with pytest.raises(PairingError) as failed:
        await pair(url)
    assert "not the pinned" in str(failed.value) and dead in str(failed.value)
    assert PairingHandler.seen == [], "the code never left for the impostor"


def test_pinned_context_checks_inside_blocking_handshakes_too(https_pairing, certs):
    server, fp = https_pairing
    _, (_, _, other_fp) = certs
    import socket
    for pin, ok in ((fp, True), (other_fp, False)):
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as raw:
            if ok:
                with pinned_context(pin).wrap_socket(raw) as tls:
                    assert fingerprint_of(tls.getpeercert(binary_form=True)) == fp
            else:
                with pytest.raises(FingerprintMismatch):
                    pinned_context(pin).wrap_socket(raw)


def _assert(value):
    assert value
