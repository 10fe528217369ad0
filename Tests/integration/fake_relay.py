"""A local fake of Home Assistant's push relay (mobile-apps.home-assistant.io) for the integration tests.

It serves ``POST /api/sendPushNotification`` and ``POST /api/sendPush/android/v1`` on 127.0.0.1 (port 0 by
default) from a thread, records every request, and answers by the relay's own rules (``relay_rules``, each naming
the relay file and function it follows) — or as a test scripts it:

    with FakeRelay() as relay:
        relay.script(relay.rate_limited(resets_in=5), relay.error(500), relay.ok())
        ...  # point lanpushd's relay.upstream (or a client's push_url) at relay.url
        relay.wait_for(3)
        assert relay.requests[-1].sent["apns"]["payload"]["aps"]["event"] == "update"

By its rules: 403 ``errorMessage`` for a missing token or one without ``:``; a bare 500 for a body the relay's code
throws on (no ``registration_info`` on a notification); 429 ``RateLimited`` once a token's successful sends of the
day reach ``maximum`` (only counted requests: HA's commands and critical alerts with a volume are not); 500
``InvalidToken`` for a token ``unregister``-ed from FCM, 500 ``PayloadTooLarge`` for a message over APNs' or FCM's
4 KB; else 201 ``{messageId, sentPayload, target, rateLimits}``. Each request's FCM message is ``Recorded.sent``;
everything FCM took is ``delivered`` (the relay's own "rate limited" push among it).

Scripted answers (each may carry ``delay=`` seconds before it is sent), used one per request, in order, then
``default`` (the rules):
- ``ok()``               the rules' answer
- ``rate_limited()``     429 as the quota gives it, with ``resetsAt``
- ``forbidden()``        403 ``{"errorMessage":"..."}``
- ``error(500)``         ``{"errorType":"InternalError","errorStep":"sendNotification","message"}`` (FCM failed)
- ``invalid_token()``    500 ``InvalidToken`` (FCM: registration-token-not-registered)
- ``payload_too_large()`` 500 ``PayloadTooLarge``
- ``slow(s)``            the default answer after ``s`` seconds (the client's timeout should fire first)
- ``drop()``             close the connection without answering
``down(seconds)`` stops listening (connections are refused) and comes back on the same port.

``FakeRelay(tls=True)`` serves https instead, as the real relay does: its certificate (for 127.0.0.1 and localhost)
is signed by a test CA made for this instance alone, whose PEM is ``ca_file`` — the bundle a client must trust. Another
instance's ``ca_file`` is a CA this one's certificate does not chain to. A client that fails the handshake only loses
its own connection.
"""
from __future__ import annotations

import copy
import datetime as _dt
import json
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import relay_rules as rules

PATHS = ("/api/sendPushNotification", "/api/sendPush/android/v1")


def next_utc_midnight(now: float | None = None) -> float:
    now = time.time() if now is None else now
    return (int(now // 86400) + 1) * 86400.0


def iso8601(ts: float) -> str:
    """``2024-01-02T00:00:00.000Z``, as the relay (JavaScript ``toISOString``) writes it."""
    d = _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


@dataclass
class Answer:
    kind: str  # ok | rate_limited | forbidden | error | drop | slow
    status: int = 201
    delay: float = 0.0
    resets_at: float | None = None
    body: dict | None = None
    message: str | None = None


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict
    raw: bytes
    body: object  # parsed JSON, or None when the body was not JSON
    at: float  # time.time() at arrival
    answer_status: int | None = None  # None: dropped / not answered (yet)
    answered_at: float | None = None
    answer: dict | None = None  # the JSON the relay answered
    sent: dict | None = None  # the FCM message the relay built for it (None: refused before building)
    counted: bool | None = None  # whether it counted against the token's quota (updateRateLimits)

    @property
    def token(self):
        return self.body.get("push_token") if isinstance(self.body, dict) else None

    def header(self, name: str):
        for k, v in self.headers.items():
            if k.lower() == name.lower():
                return v
        return None


@dataclass
class Quota:
    maximum: int
    resets_at: float
    attempts: int = 0
    successful: int = 0
    errors: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.maximum - self.successful)

    def json(self) -> dict:
        return {"attempts": self.attempts, "successful": self.successful, "errors": self.errors,
                "total": self.successful + self.errors, "maximum": self.maximum, "remaining": self.remaining,
                "resetsAt": iso8601(self.resets_at)}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    tls: ssl.SSLContext | None = None

    def get_request(self):
        sock, addr = super().get_request()
        if self.tls is not None:
            # No handshake here, on the accepting thread: one client that stalls or fails it would hold up the rest.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def finish_request(self, request, client_address):
        if isinstance(request, ssl.SSLSocket):
            try:
                request.settimeout(10)
                request.do_handshake()
                request.settimeout(None)
            except OSError:
                return  # e.g. a client that does not trust the CA: only its connection ends
        super().finish_request(request, client_address)


_OPENSSL_CNF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = lanpush fake relay
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
subjectAltName = IP:127.0.0.1, DNS:localhost
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def _make_certificates(folder: Path) -> None:
    """A throw-away CA (ca.pem) and a server certificate it signed (server.pem, server.key), in ``folder``.

    The extensions are spelled out, not taken from the system's openssl.cnf, so that strict verifiers (X509_STRICT,
    on in Python 3.13's default context) accept the chain wherever the tests run."""
    (folder / "openssl.cnf").write_text(_OPENSSL_CNF)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        done = subprocess.run(["openssl", *args], cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")

    # A name of its own per CA: two instances' CAs must not look like one to a verifier.
    ca_name = f"/CN=lanpush fake relay CA {uuid.uuid4().hex[:12]}"
    openssl("req", "-x509", "-config", "openssl.cnf", "-extensions", "ca", "-subj", ca_name, *key,
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "7")
    openssl("req", "-new", "-config", "openssl.cnf", "-subj", "/CN=localhost", *key,
            "-keyout", "server.key", "-out", "server.csr")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", f"0x{uuid.uuid4().hex}",
            "-days", "7", "-extfile", "openssl.cnf", "-extensions", "server", "-out", "server.pem")


class FakeRelay:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, maximum: int = 500, resets_at: float | None = None,
                 enforce_quota: bool = True, tls: bool = False):
        self.host = host
        self.port = port
        self.maximum = maximum
        self.resets_at = resets_at
        self.enforce_quota = enforce_quota
        self.default = Answer("ok")
        self.requests: list[Recorded] = []
        self.quotas: dict[str, Quota] = {}
        self.unregistered: set[str] = set()  # FCM tokens FCM no longer knows (the app was removed)
        self.delivered: list[dict] = []  # every FCM message FCM took, in order
        self._script: list[Answer] = []
        self._lock = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._down_timer: threading.Timer | None = None
        self._connections: set[socket.socket] = set()
        self.tls = tls
        self.ca_file: str | None = None  # tls: the PEM of the CA that signed the relay's certificate
        self._tls_context: ssl.SSLContext | None = None
        self._tls_dir: str | None = None
        if tls:
            self._tls_dir = tempfile.mkdtemp(prefix="fake-relay-tls-")
            folder = Path(self._tls_dir)
            _make_certificates(folder)
            self.ca_file = str(folder / "ca.pem")
            self._tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._tls_context.load_cert_chain(folder / "server.pem", folder / "server.key")
            # Says HTTP/1.1 in ALPN, so a client that offers h2 as well knows at once which one it got.
            self._tls_context.set_alpn_protocols(["http/1.1"])

    # ---- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> "FakeRelay":
        self._listen()
        return self

    def stop(self) -> None:
        if self._down_timer:
            self._down_timer.cancel()
        self._close()
        if self._tls_dir:
            shutil.rmtree(self._tls_dir, ignore_errors=True)
            self._tls_dir = None

    def __enter__(self) -> "FakeRelay":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL: configure it as lanpushd's ``relay.upstream`` (paths are appended)."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def ios_url(self) -> str:
        return self.url + PATHS[0]

    @property
    def android_url(self) -> str:
        return self.url + PATHS[1]

    def _listen(self) -> None:
        relay = self

        class Handler(_Handler):
            fake = relay

        self._server = _Server((self.host, self.port), Handler)
        self._server.tls = self._tls_context
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-relay:{self.port}", daemon=True)
        self._thread.start()

    def _close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        # Kept-alive connections too: "down" means nothing answers.
        with self._lock:
            conns, self._connections = self._connections, set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # ---- outages ---------------------------------------------------------------------------------------------

    @property
    def is_down(self) -> bool:
        return self._server is None

    def go_down(self) -> None:
        """Stop listening: new connections are refused until ``come_up``."""
        self._close()

    def come_up(self) -> None:
        if self._server is None:
            self._listen()

    def down(self, seconds: float) -> None:
        """Refuse connections for ``seconds``, then listen again on the same port (in the background)."""
        self.go_down()
        self._down_timer = threading.Timer(seconds, self.come_up)
        self._down_timer.daemon = True
        self._down_timer.start()

    # ---- scripting -------------------------------------------------------------------------------------------

    def script(self, *answers: Answer) -> None:
        """Answers for the next requests, one each, in order (after any still scripted)."""
        with self._lock:
            self._script.extend(answers)

    def clear_script(self) -> None:
        with self._lock:
            self._script.clear()

    def set_default(self, answer: Answer) -> None:
        self.default = answer

    def set_quota(self, token: str, remaining: int | None = None, maximum: int | None = None,
                  resets_at: float | None = None) -> Quota:
        """Sets a token's counters, e.g. ``set_quota(tok, remaining=3)`` to test the reserve and 429."""
        with self._lock:
            q = self._quota(token)
            if maximum is not None:
                q.maximum = maximum
            if remaining is not None:
                q.maximum = max(q.maximum, remaining)
                q.successful = q.maximum - remaining
            if resets_at is not None:
                q.resets_at = resets_at
            return q

    @staticmethod
    def ok(delay: float = 0.0, status: int = 201) -> Answer:
        return Answer("ok", status=status, delay=delay)

    @staticmethod
    def rate_limited(resets_at: float | None = None, resets_in: float | None = None, delay: float = 0.0) -> Answer:
        if resets_in is not None:
            resets_at = time.time() + resets_in
        return Answer("rate_limited", status=429, delay=delay, resets_at=resets_at)

    @staticmethod
    def forbidden(message: str = "You did not send a token!", delay: float = 0.0) -> Answer:
        return Answer("forbidden", status=403, delay=delay, message=message)

    @staticmethod
    def error(status: int = 500, message: str = "Internal error", delay: float = 0.0) -> Answer:
        return Answer("error", status=status, delay=delay, message=message)

    @staticmethod
    def invalid_token(delay: float = 0.0) -> Answer:
        return Answer("fcm", status=500, delay=delay, message="messaging/registration-token-not-registered")

    @staticmethod
    def payload_too_large(delay: float = 0.0) -> Answer:
        return Answer("fcm", status=500, delay=delay, message="messaging/payload-too-large")

    def unregister(self, token: str) -> None:
        """FCM forgets ``token`` (the app was deleted): every later send to it answers InvalidToken."""
        with self._lock:
            self.unregistered.add(token)

    @staticmethod
    def slow(seconds: float) -> Answer:
        return Answer("slow", delay=seconds)

    @staticmethod
    def drop(delay: float = 0.0) -> Answer:
        return Answer("drop", status=0, delay=delay)

    @staticmethod
    def custom(status: int, body: dict, delay: float = 0.0) -> Answer:
        return Answer("custom", status=status, body=body, delay=delay)

    # ---- observation -----------------------------------------------------------------------------------------

    def wait_for(self, count: int, timeout: float = 10.0, predicate=None, answered: bool = False) -> list[Recorded]:
        """Waits until ``count`` requests (matching ``predicate``, if given) arrived — and, with ``answered``, were
        answered (or dropped); returns them."""
        deadline = time.time() + timeout
        with self._lock:
            while True:
                matching = [r for r in self.requests if predicate is None or predicate(r)]
                if len(matching) >= count and (not answered or all(r.answered_at for r in matching[:count])):
                    return matching
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"fake relay: {len(matching)} of {count} requests after {timeout} s")
                self._lock.wait(left)

    def bodies(self, predicate=None) -> list:
        with self._lock:
            return [r.body for r in self.requests if predicate is None or predicate(r)]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._script.clear()
            self.quotas.clear()
            self.unregistered.clear()
            self.delivered.clear()

    # ---- internals -------------------------------------------------------------------------------------------

    def _quota(self, token: str) -> Quota:
        q = self.quotas.get(token)
        now = time.time()
        if q is None or q.resets_at <= now:
            resets = self.resets_at if self.resets_at and self.resets_at > now else next_utc_midnight(now)
            q = Quota(maximum=self.maximum, resets_at=resets)
            self.quotas[token] = q
        return q

    def _record(self, rec: Recorded, scripted: bool = True) -> Answer:
        with self._lock:
            self.requests.append(rec)
            self._lock.notify_all()
            return self._script.pop(0) if scripted and self._script else self.default

    def _answered(self, rec: Recorded, status: int | None, payload: dict | None = None) -> None:
        with self._lock:
            rec.answer_status = status
            rec.answer = payload
            rec.answered_at = time.time()
            self._lock.notify_all()

    def _respond(self, rec: Recorded, answer: Answer) -> tuple[int, dict] | None:
        """The status and JSON body for ``answer`` (``None``: drop the connection), in handleRequest's order:
        token checks, the payload builder, the quota (counted requests only), then FCM."""
        if answer.kind == "drop":
            return None
        if answer.kind == "custom":
            return answer.status, answer.body or {}
        if answer.kind == "forbidden":
            return 403, {"errorMessage": answer.message}
        if not isinstance(rec.body, dict):
            return 400, {"statusCode": 400, "error": "Bad Request", "message": "Body is not valid JSON"}  # fastify
        try:
            refused = rules.refuse_token(rec.body)
            if refused is not None:
                return refused
            counted, message = rules.build(rec.path, copy.deepcopy(rec.body))
        except (rules.RelayCrash, KeyError, TypeError, AttributeError, ValueError) as crash:
            return rules.crash_answer(rules.RelayCrash(str(crash)))
        token = rec.body["push_token"]
        message["token"] = token
        rec.sent, rec.counted = message, counted
        with self._lock:
            q = self._quota(token)
            if counted:
                # rate-limiter recordAttempt: the attempt counts first; limited once successful sends reach maximum.
                q.attempts += 1
                if self.enforce_quota and q.successful == q.maximum:
                    self.delivered.append(self._rate_limited_push(token, q))  # handlers.js sendRateLimitedNotification
                if answer.kind == "rate_limited" or (self.enforce_quota and q.successful >= q.maximum):
                    limits = q.json()
                    if answer.resets_at is not None:
                        limits["resetsAt"] = iso8601(answer.resets_at)
                    limits["remaining"] = 0
                    return 429, {"errorType": "RateLimited", "message": "The given target has reached the maximum "
                                 "number of notifications allowed per day. Please try again later.",
                                 "target": token, "rateLimits": limits}
            try:
                if answer.kind == "error":
                    raise rules.FCMError("app/internal-error", answer.message or "Internal error")
                if answer.kind == "fcm":
                    raise rules.FCMError(answer.message, "Requested entity was not found." if "token" in answer.message
                                         else "Message is too big")
                rules.fcm_check(message, self.unregistered)
            except rules.FCMError as failure:
                if counted:
                    q.errors += 1
                status, body = rules.error_answer(failure)
                return (answer.status if answer.kind == "error" else status), body
            self.delivered.append(message)
            if counted:
                q.successful += 1
            return answer.status, {"messageId": f"projects/home-assistant-mobile-apps/messages/{uuid.uuid4().hex}",
                                   "sentPayload": message, "target": token, "rateLimits": q.json()}

    @staticmethod
    def _rate_limited_push(token: str, q: Quota) -> dict:
        return {"notification": {"title": "Notifications Rate Limited",
                                 "body": f"You have now sent more than {q.maximum} notifications today. You will not "
                                         "receive new notifications until midnight UTC."},
                "data": {"rateLimited": "true", "maxNotificationsPerDay": str(q.maximum),
                         "resetsAt": iso8601(q.resets_at)},
                "fcm_options": {"analytics_label": "rateLimitNotification"}, "token": token}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeRelay
    protocol_version = "HTTP/1.1"
    server_version = "FakeRelay/1"

    def log_message(self, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        with self.fake._lock:
            self.fake._connections.add(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.fake._lock:
                self.fake._connections.discard(self.connection)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = Recorded(method="POST", path=self.path, headers=dict(self.headers.items()), raw=raw, body=body,
                       at=time.time())
        if self.path not in PATHS:
            self.fake._record(rec, scripted=False)  # a wrong path is a bug the test should see
            self._send(404, {"errorType": "NotFound", "message": f"no route {self.path}"}, rec)
            return
        answer = self.fake._record(rec)
        if answer.kind == "slow":
            time.sleep(answer.delay)
            answer = self.fake.default if self.fake.default.kind != "slow" else FakeRelay.ok()
        elif answer.delay:
            time.sleep(answer.delay)
        result = self.fake._respond(rec, answer)
        if result is None:
            self.fake._answered(rec, None)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self._send(result[0], result[1], rec)

    def do_GET(self):
        self._send(405, {"errorType": "MethodNotAllowed", "message": "POST only"}, None)

    def _send(self, status: int, payload: dict, rec: Recorded | None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            status = None  # the client went away (e.g. its timeout fired first)
        if rec is not None:
            self.fake._answered(rec, status, payload)


if __name__ == "__main__":  # a manual run: python3 fake_relay.py [port] [--tls]
    import sys

    args = [a for a in sys.argv[1:] if a != "--tls"]
    with FakeRelay(port=int(args[0]) if args else 0, tls="--tls" in sys.argv) as r:
        print(r.url, *([f"CA: {r.ca_file}"] if r.tls else []), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
