"""The relay path over https, as to the real relay: the fake relay's certificate is signed by a CA of its own, which
lanpushd trusts only when it is given as OpenSSL's standard SSL_CERT_FILE."""
import json
import re
import time

from fake_relay import FakeRelay

HA_BODY_KEYS = {"push_token", "registration_info", "message", "data"}
WASHER_START = dict(title="Washing Machine", message="Cycle started", data={"tag": "washer_cycle", "live_update": True})


def make(gateway, relay, env):
    cfg = {"upstream": relay.url, "min_update_interval": 1, "timeout": 2}
    return gateway(extra="relay: " + json.dumps(cfg) + "\n", session={"ping_interval": 1, "ping_timeout": 1, "ack_timeout": 2},
                   env=env)


def gone_device(gw, relay):
    """Registers phone with the fake relay as its push_url and disconnects it: its pushes go to the relay."""
    c = gw.client("phone")
    c.send({"type": "register", "push_token": "fcm:tok-phone", "push_url": relay.ios_url,
            "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2024.1", "os_version": "17.2",
                                  "webhook_id": "hook-1"}})
    assert c.pump(lambda c: any(f["type"] == "registered" for f in c.frames))
    c.close()
    gw.wait_disconnected()


def relay_errors(gw):
    """Relay requests that got no HTTP answer at all (connection or TLS failures)."""
    status, text = gw.get("/metrics")
    assert status == 200
    found = re.search(r'^lanpush_relay_answers_total\{status="error"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def test_relay_over_https_with_a_trusted_ca(gateway):
    with FakeRelay(tls=True) as relay:
        gw = make(gateway, relay, env={"SSL_CERT_FILE": relay.ca_file})
        gone_device(gw, relay)
        status, _ = gw.relay("fcm:tok-phone", **WASHER_START)
        assert status == 202
        got = relay.wait_for(1)[0]
        assert got.path == "/api/sendPushNotification"
        assert HA_BODY_KEYS <= set(got.body)
        assert got.body["push_token"] == "fcm:tok-phone" and got.body["registration_info"]["webhook_id"] == "hook-1"
        assert got.body["message"] == "Cycle started" and got.body["title"] == "Washing Machine"
        assert got.body["data"]["tag"] == "washer_cycle"


def test_relay_with_an_untrusted_certificate_is_not_delivered(gateway):
    with FakeRelay(tls=True) as relay:
        # Unset rather than inherited: the system CAs only, whatever the tests' environment points at.
        gw = make(gateway, relay, env={"SSL_CERT_FILE": None})
        gone_device(gw, relay)
        before = relay_errors(gw)
        t0 = time.time()
        assert gw.relay("fcm:tok-phone", **WASHER_START)[0] == 202
        # Counted as a request without an answer, like a refused connection: the operator's signal that the relay
        # path fails, whatever words the TLS library puts in the log.
        deadline = t0 + 10
        while relay_errors(gw) <= before and time.time() < deadline:
            time.sleep(0.1)
        assert relay_errors(gw) > before, gw.logtext()
        time.sleep(max(0.0, t0 + 3 - time.time()))  # retries included, nothing gets through
        assert relay.requests == []
        assert gw.proc.poll() is None
        assert gw.get("/healthz")[0] == 200
