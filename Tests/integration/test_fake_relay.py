"""The fake relay holds to the real one: for the bodies HA core sends, its builders give the FCM message the relay's
own code gives (Tests/Fixtures/ha-relay/messages.json, recorded from the relay's createPayload), and over HTTP it
answers as handleRequest does."""
import json
from pathlib import Path

import urllib.error
import urllib.request

import pytest

import relay_rules as rules
from fake_relay import FakeRelay

FIXTURES = json.loads((Path(__file__).parents[1] / "Fixtures/ha-relay/messages.json").read_text())


@pytest.mark.parametrize("case", FIXTURES["cases"], ids=lambda c: c["name"])
def test_the_builders_give_the_relays_own_message(case):
    counted, message = rules.build(case["path"], json.loads(json.dumps(case["body"])), now=FIXTURES["now"])
    message["token"] = case["body"]["push_token"]
    assert message == case["message"]
    assert counted == case["counted"]


IOS = {"app_id": "io.robbie.HomeAssistant", "app_version": "2026.8.1", "webhook_id": "hook", "os_version": "18.6"}


def post(relay, body, path="/api/sendPushNotification"):
    request = urllib.request.Request(relay.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            status, raw, kind = r.status, r.read(), r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        status, raw, kind = e.code, e.read(), e.headers["Content-Type"]
    assert kind.startswith("application/json")  # HA core's aiohttp .json() needs it
    return status, json.loads(raw)


def test_the_relay_answers_as_handle_request_does():
    with FakeRelay(maximum=2) as relay:
        assert post(relay, {"message": "x", "registration_info": IOS}) == (403, {"errorMessage": "You did not send a token!"})
        assert post(relay, {"message": "x", "push_token": "sns-token", "registration_info": IOS}) == \
            (403, {"errorMessage": "That is not a valid FCM token"})
        status, answer = post(relay, {"message": "x", "push_token": "a:b"})  # no registration_info: a TypeError
        assert status == 500 and answer["error"] == "Internal Server Error"
        status, answer = post(relay, {"message": "hello", "push_token": "a:b", "registration_info": IOS})
        assert status == 201 and answer["target"] == "a:b" and answer["sentPayload"]["apns"]["payload"]["aps"]["alert"] == {"body": "hello"}
        assert answer["rateLimits"]["successful"] == 1 and answer["rateLimits"]["remaining"] == 1
        assert post(relay, {"message": "second", "push_token": "a:b", "registration_info": IOS})[0] == 201
        status, answer = post(relay, {"message": "third", "push_token": "a:b", "registration_info": IOS})
        assert status == 429 and answer["errorType"] == "RateLimited" and answer["rateLimits"]["attempts"] == 3
        assert relay.delivered[-1]["notification"]["title"] == "Notifications Rate Limited"
        # A command does not count: it goes through over quota, and leaves the counters alone.
        status, answer = post(relay, {"message": "request_location_update", "push_token": "a:b", "registration_info": IOS})
        assert status == 201 and answer["rateLimits"]["successful"] == 2
        assert relay.requests[-1].counted is False
        relay.unregister("a:b")
        status, answer = post(relay, {"message": "request_location_update", "push_token": "a:b", "registration_info": IOS})
        assert status == 500 and answer["errorType"] == "InvalidToken" and answer["errorCode"] == "registration-token-not-registered"
        status, answer = post(relay, {"message": "x" * 5000, "push_token": "c:d", "registration_info": IOS})
        assert status == 500 and answer["errorType"] == "PayloadTooLarge"
        assert relay.quotas["c:d"].errors == 1 and relay.quotas["c:d"].successful == 0
