"""HA-native mode against a real Home Assistant 2025.4.4 on loopback.

lanpushd registers its devices with HA's mobile_app, subscribes to HA's local push channel and confirms each
event, and makes what it sees of each device HA entities (through the same mobile_app webhook). Witnesses: HA itself
(its REST API, its websocket API with a client of our own, its stored config entries, its log, an automation and the
README's `rest` sensor in its configuration), a lanpush.v1 LAN client (gateway.LanClient), and lanpushd's
/v1/devices and /metrics.

Marked `home_assistant`: `pytest -m "not home_assistant"` skips it. The first run builds the HA venv (a few
minutes, cached outside the repository, see home_assistant.py); afterwards the module takes about a minute.
"""
import os
import re
import secrets
import signal
import time
from pathlib import Path

import pytest

import gateway as gateway_module
from fake_relay import FakeRelay
from gateway import Gateway
from home_assistant import HomeAssistant, ensure_venv

pytestmark = pytest.mark.home_assistant

if os.environ.get("LANPUSHD"):  # e.g. a build in another scratch dir
    gateway_module.BINARY = Path(os.environ["LANPUSHD"])

# The HA-docs washer cycle, as an automation would call notify.mobile_app_<device>.
WASHER = [
    ("Washing Machine", "Cycle started", {"tag": "washer_cycle", "live_update": True}),
    ("Washing Machine", "Rinsing · 1 of 2", {"tag": "washer_cycle", "live_update": True, "progress": 900,
                                             "progress_max": 3600, "chronometer": True, "when": 2700,
                                             "when_relative": True, "notification_icon": "mdi:washing-machine",
                                             "notification_icon_color": "#2196F3", "color": "#2196F3"}),
    ("Washing Machine", "Cycle complete", {"tag": "washer_cycle", "live_update": True, "progress": 3600,
                                           "progress_max": 3600, "notification_icon": "mdi:washing-machine",
                                           "notification_icon_color": "#4CAF50", "color": "#4CAF50"}),
]

# What HA 2025.4.4 logs when a notification did not go through the local push channel. There is no log line
# for the confirm timeout itself (mobile_app/push_notification.py: after PUSH_CONFIRM_TIMEOUT = 10 s it silently
# tears the channel down and calls the push_url sender), so the witness is the sender's own line:
# log_rate_limits() in mobile_app/notify.py logs at INFO after every successful push_url delivery whose answer has
# rateLimits (lanpush's ingest always sends them; home_assistant.py sets that logger to info). The others are the
# sender's errors, and the error HA raises when a device has neither a channel nor a push_url.
FALLBACK_MARKERS = ["mobile_app push notification rate limits for", "Error sending notification to",
                    "Timeout sending notification to", "Device not connected to local push notifications"]


# The sensors' throttle in these tests (home_assistant.sensor_interval): the first change after a quiet spell goes
# at once, later ones within a second.
SENSOR_INTERVAL = 1
RELAY_PORT = gateway_module.free_port()
SENSORS = ("connected", "path", "activities", "queued_notifications", "relay_remaining", "relay_resets_at", "last_seen")

# An automation that mirrors kitchen's LAN connectivity into an input_boolean: HA acting on lanpush's entity.
AUTOMATION = """
input_boolean:
  kitchen_online:
    name: Kitchen online
automation:
  - alias: Kitchen online follows its LAN connectivity
    triggers:
      - trigger: state
        entity_id: binary_sensor.kitchen_lan_connected
        to: ["on", "off"]
    actions:
      - action: "input_boolean.turn_{{ trigger.to_state.state }}"
        target:
          entity_id: input_boolean.kitchen_online
"""


def readme_rest_sensor(gw):
    """The README's `rest` example (for users without HA-native mode), pointed at this lanpushd and at `kitchen`."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "/v1/devices" in b and "rest:" in b)
    return "\n" + block.replace("HOST", "127.0.0.1").replace(":8765", f":{gw.port}").replace("'kitchen-tablet'", "'kitchen'")


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def ha_status(gw):
    status, body = gw.get("/v1/devices")
    assert status == 200, body
    return {d["id"]: d.get("home_assistant") for d in body["devices"]}


def device_json(gw, device):
    status, body = gw.get("/v1/devices")
    assert status == 200, body
    return next(d for d in body["devices"] if d["id"] == device)


def wait_subscribed(gw, timeout=60):
    """Every exposed device subscribed, with its sensors registered."""
    started = time.time()
    wait_for(lambda: all(s and (s["exposed"] is False or (s["channel"] == "subscribed" and s["sensors"] == "registered"))
                         for s in ha_status(gw).values()), timeout,
             "every device's local push channel and sensors: " + repr(ha_status(gw)))
    return time.time() - started


def ha_device_id(ha, device):
    devices, _ = ha.registry()
    mine = [d["id"] for d in devices if ["mobile_app", f"lanpush-{device}"] in d["identifiers"]]
    return mine[0] if len(mine) == 1 else mine or None


def lanpush_entities(ha):
    """(entity_id, unique_id, HA device id) of every mobile_app entity lanpush made."""
    return sorted((e["entity_id"], e["unique_id"], e["device_id"]) for e in ha.entities() if "_lanpush-" in e["unique_id"])


def entities_of(ha, device):
    """unique-id suffix → entity_id of `device`'s entities, all under its one HA device."""
    device_id = ha_device_id(ha, device)
    found = [e for e in ha.entities() if e["unique_id"].split("_", 1)[-1].startswith(f"lanpush-{device}-")]
    assert all(e["device_id"] == device_id for e in found), found
    return {e["unique_id"].rsplit(f"lanpush-{device}-", 1)[1]: e["entity_id"] for e in found}


def ha_state(ha, entity_id):
    state = ha.state(entity_id)
    return state and state["state"]


def fallbacks(ha, every=True):
    return [line for line in ha.logtext(every=every).splitlines() if any(m in line for m in FALLBACK_MARKERS)]


def pump_synced(client):
    assert client.pump(lambda c: any(f["type"] == "synced" for f in c.frames), timeout=10)


def assert_notify_reaches_lan(ha, gw, device, service, message, timeout=5):
    """HA's `notify.<service>` with `message` reaches a LAN session of `device` (opened here, closed after)."""
    client = gw.client(device)
    pump_synced(client)
    status, _ = ha.notify(service, title="Door", message=message)
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == message for n in c.notifications), timeout=timeout)
    client.close()


@pytest.fixture(scope="module")
def lanpush_config():
    """lanpushd's config (its port and viewer token go into HA's configuration, for the README's rest sensor); the
    home_assistant section is added once HA has made its token."""
    # Nothing leaves loopback: an unknown push_token (the control phone below) is relayed nowhere.
    # The LAN session is these tests' witness: kitchen's plain notifications stay on the LAN even after a test gives
    # it relay credentials (by default they would then go to the phone's companion app).
    # hand_back_after: 2 s, so the fallback test sees the hand-back's end without waiting the default 30 s; the fake
    # relays of these tests listen on RELAY_PORT, a push_url lanpush may name (it is listed).
    return Gateway(devices=("kitchen", "hall"), extra="relay:\n  upstream: http://127.0.0.1:9\n  hand_back_after: 2\n"
                   f"  allowed_push_urls: [\"http://127.0.0.1:{RELAY_PORT}\"]\n",
                   notifications={"kitchen": "lan"})


@pytest.fixture(scope="module")
def ha(lanpush_config):
    venv = ensure_venv(log=lambda m: print(m, flush=True))
    home = HomeAssistant(venv, extra_config=AUTOMATION + readme_rest_sensor(lanpush_config),
                         secrets={"lanpush_viewer": f"Bearer {lanpush_config.viewer}"})
    home.start_seconds = [home.start()]
    yield home
    home.cleanup()


@pytest.fixture(scope="module")
def lanpush(ha, lanpush_config):
    gw = lanpush_config
    gw.config.write_text(gw.config.read_text() + f"home_assistant:\n  url: {ha.url}\n  token: {ha.token}\n"
                         f"  sensor_interval: {SENSOR_INTERVAL}\n")
    gw.start()
    yield gw
    gw.stop()
    print("lanpushd log (tail):\n" + gw.logtext())


def test_lanpush_registers_each_device_and_ha_grows_its_notify_service(ha, lanpush):
    took = wait_subscribed(lanpush)
    print(f"HA started in {ha.start_seconds[0]:.1f} s; lanpush registered and subscribed both devices in {took:.1f} s")
    services = wait_for(lambda: (s := ha.notify_services()) >= {"mobile_app_kitchen", "mobile_app_hall"} and s, 10,
                        "notify.mobile_app_kitchen and notify.mobile_app_hall")
    assert {"mobile_app_kitchen", "mobile_app_hall"} <= services
    status = ha_status(lanpush)
    for device, name in (("kitchen", "Kitchen"), ("hall", "Hall")):
        s = status[device]
        assert s["registration"] == "registered" and s["connection"] == "ready", s
        assert s["device_id"] == f"lanpush-{device}" and s["device_name"] == name
        assert s["notify_service"] == f"notify.mobile_app_{device}"
        assert len(s["webhook_id"]) == 64 and s["push_url"].startswith(f"http://127.0.0.1:{lanpush.port}/api/")
    assert lanpush.metric("lanpush_ha_registrations_total") == 2
    assert lanpush.metric("lanpush_ha_channels") == 2 and lanpush.metric("lanpush_ha_connected") == 1
    # HA's own view: one mobile_app device per lanpush device, held by one config entry, named from lanpush's config.
    devices, entries = ha.registry()
    for device, name in (("kitchen", "Kitchen"), ("hall", "Hall")):
        mine = [d for d in devices if ["mobile_app", f"lanpush-{device}"] in d["identifiers"]]
        assert len(mine) == 1 and mine[0]["name"] == name and mine[0]["manufacturer"] == "lanpush", mine
        assert len(mine[0]["config_entries"]) == 1
    assert len(entries) == 2 and all(e["state"] == "loaded" for e in entries), entries

    # What lanpush sees of each device, as entities of that HA device (unique ids lanpush-<device>-<sensor>).
    for device in ("kitchen", "hall"):
        entities = wait_for(lambda: len(e := entities_of(ha, device)) == len(SENSORS) and e, 10, f"{device}'s entities")
        assert set(entities) == set(SENSORS)
        assert entities["connected"] == f"binary_sensor.{device}_lan_connected"
        assert ha_state(ha, f"binary_sensor.{device}_lan_connected") == "off"
        assert ha_state(ha, f"sensor.{device}_delivery_path") == "none"
        assert ha_state(ha, f"sensor.{device}_live_activities") == "0"
        assert ha_state(ha, f"sensor.{device}_relay_quota_remaining") == "unknown"
        assert ha.state(f"binary_sensor.{device}_lan_connected")["attributes"]["device_class"] == "connectivity"
    assert lanpush.metric("lanpush_ha_sensor_calls_total") >= 2 * len(SENSORS)
    assert "invalid webhook" not in ha.logtext()  # HA accepted every sensor payload


def test_ha_sees_a_lan_session_come_and_go_and_an_automation_follows(ha, lanpush):
    """The connectivity sensor flips within the throttle; the automation in HA's configuration turns
    input_boolean.kitchen_online on and off with it; the README's rest sensor reads the same from /v1/devices."""
    wait_subscribed(lanpush)
    assert ha_state(ha, "binary_sensor.kitchen_lan_connected") == "off"
    client = lanpush.client("kitchen")
    pump_synced(client)
    connected = time.time()
    wait_for(lambda: ha_state(ha, "binary_sensor.kitchen_lan_connected") == "on", SENSOR_INTERVAL + 2, "the sensor on")
    print(f"connectivity sensor on {time.time() - connected:.2f} s after the session")
    assert ha.state("binary_sensor.kitchen_lan_connected")["attributes"]["sessions"] == 1
    assert ha_state(ha, "sensor.kitchen_delivery_path") == "lan"
    last_seen = ha_state(ha, "sensor.kitchen_last_seen")
    assert last_seen.startswith(time.strftime("%Y-%m-%dT", time.gmtime())), last_seen
    wait_for(lambda: ha_state(ha, "input_boolean.kitchen_online") == "on", 5, "the automation to turn kitchen_online on")

    # The README's rest sensor (no HA-native mode needed) says the same, from GET /v1/devices. HA started before
    # lanpushd (it makes the token lanpushd uses), so its first fetch failed: reload the rest platform.
    status, _ = ha.rest("POST", "/api/services/rest/reload", {})
    assert status == 200
    wait_for(lambda: ha_state(ha, "binary_sensor.kitchen_tablet_lan_connected") == "on", 10, "the rest sensor on")
    assert ha_state(ha, "sensor.kitchen_tablet_delivery_path") == "lan"

    client.close()
    gone = time.time()
    wait_for(lambda: ha_state(ha, "binary_sensor.kitchen_lan_connected") == "off", SENSOR_INTERVAL + 2, "the sensor off")
    print(f"connectivity sensor off {time.time() - gone:.2f} s after the session closed")
    assert ha_state(ha, "sensor.kitchen_delivery_path") == "none"
    wait_for(lambda: ha_state(ha, "input_boolean.kitchen_online") == "off", 5, "the automation to turn kitchen_online off")


def test_washer_cycle_through_the_channel_reaches_a_lan_session_and_every_event_is_confirmed(ha, lanpush):
    wait_subscribed(lanpush)
    client = lanpush.client("kitchen")
    pump_synced(client)
    events0 = lanpush.metric("lanpush_ha_events_total")
    confirms0 = lanpush.metric("lanpush_ha_confirms_total")
    webhook = ha_status(lanpush)["kitchen"]["webhook_id"]
    first = time.time()
    latencies = []
    for i, (title, message, data) in enumerate(WASHER):
        sent = time.time()
        status, body = ha.notify("mobile_app_kitchen", title=title, message=message, data=data)
        assert status == 200, body
        assert client.pump(lambda c: len([f for f in c.frames if f["type"] in ("start", "update")]) > i, timeout=5)
        latencies.append(time.time() - sent)
    status, body = ha.notify("mobile_app_kitchen", message="clear_notification", data={"tag": "washer_cycle"})
    assert status == 200, body
    assert client.pump(lambda c: any(f["type"] == "end" for f in c.frames), timeout=5)
    print("notify call → LAN frame: " + ", ".join(f"{x * 1000:.0f} ms" for x in latencies))

    # start / patches / end, as for the relay ingest; the attributes name the HA registration that started it.
    kinds = [f["type"] for f in client.frames if f["type"] in ("start", "update", "end")]
    assert kinds == ["start", "update", "update", "end"]
    start = next(f for f in client.frames if f["type"] == "start")
    assert start["attributes"]["title"] == "Washing Machine" and start["attributes"]["webhook_id"] == webhook
    rinse = next(f for f in client.frames if f["type"] == "update")
    assert rinse["patch"]["progress"] == 900 and rinse["patch"]["icon"] == "mdi:washing-machine"
    assert abs(rinse["patch"]["countdown_end"] - (time.time() + 2700)) < 30
    # clear_notification ends and dismisses at once, as on the phone.
    assert "washer_cycle" not in client.activities
    final = client.dismissed["washer_cycle"]
    assert final["title"] == "Washing Machine"
    assert final["state"] == {"message": "Cycle complete", "title": "Washing Machine", "progress": 3600, "progress_max": 3600,
                              "icon": "mdi:washing-machine", "color": "#4CAF50"}

    # Every event confirmed, and HA accepted every confirm (it answers an error once it has given up on one).
    wait_for(lambda: lanpush.metric("lanpush_ha_confirms_total") - confirms0 == 4, 5, "4 confirms")
    assert client.pump(lambda c: any(n["type"] == "clear" and n["tag"] == "washer_cycle" for n in c.notifications))
    assert lanpush.metric("lanpush_ha_events_total") - events0 == 4
    assert lanpush.metric("lanpush_ha_confirm_errors_total") == 0
    s = ha_status(lanpush)["kitchen"]
    assert s["pending_confirms"] == 0 and s["confirm_errors"] == 0 and s["channel"] == "subscribed"

    # Past HA's 10 s confirm timeout: no fallback in HA's log, and the channel is still HA's way to the device
    # (a timeout would have torn it down: the next notification would go to the push_url and be logged).
    time.sleep(max(0.0, first + 11 - time.time()))
    assert fallbacks(ha) == []
    status, _ = ha.notify("mobile_app_kitchen", title="Door", message="Front door opened", data={"group": "doors"})
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == "Front door opened" for n in c.notifications), timeout=5)
    wait_for(lambda: lanpush.metric("lanpush_ha_confirms_total") - confirms0 == 5, 5, "the 5th confirm")
    assert fallbacks(ha) == []
    client.close()

    # Control for the witness: a phone HA can reach only through its push_url (no channel; a relay of its own) does
    # produce the fallback line — so its absence above means something.
    with FakeRelay() as relay:
        status, phone = ha.rest("POST", "/api/mobile_app/registrations", {
            "device_id": "control-phone", "app_id": "io.robbie.HomeAssistant", "app_name": "Home Assistant",
            "app_version": "2025.4", "device_name": "Control Phone", "manufacturer": "Apple", "model": "iPhone",
            "os_name": "iOS", "os_version": "18.0", "supports_encryption": False,
            "app_data": {"push_url": relay.ios_url, "push_token": "fcm:control-phone-token"}})
        assert status == 201, phone
        wait_for(lambda: "mobile_app_control_phone" in ha.notify_services(), 10, "notify.mobile_app_control_phone")
        status, _ = ha.notify("mobile_app_control_phone", message="via push_url")
        assert status == 200
        wait_for(lambda: any("Control Phone" in line for line in fallbacks(ha)), 5, "the push_url line in HA's log")
    assert not any("Kitchen" in line or "Hall" in line for line in fallbacks(ha))


def test_a_device_with_no_lan_session_gets_them_through_the_relay_path_and_they_are_confirmed(ha, lanpush):
    """"Confirmed once stored and either delivered to a LAN session or handed to the relay path": the device's
    client registered its own relay target (a phone's push_token and relay URL) and left."""
    wait_subscribed(lanpush)
    with FakeRelay(port=RELAY_PORT) as relay:
        client = lanpush.client("kitchen")
        pump_synced(client)
        client.send({"type": "register", "push_token": "fcm:kitchen-phone-token", "push_url": relay.ios_url,
                     "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "2025.4",
                                           "os_version": "18.0", "webhook_id": "the-phones-own-webhook"}})
        assert client.pump(lambda c: any(f["type"] == "registered" for f in c.frames), timeout=5)
        client.close()
        wait_for(lambda: not device_json(lanpush, "kitchen")["connected"], 5, "kitchen to be gone")
        confirms0 = lanpush.metric("lanpush_ha_confirms_total")
        status, _ = ha.notify("mobile_app_kitchen", title="Dryer", message="Drying",
                              data={"tag": "dryer", "live_update": True, "progress": 10, "progress_max": 60})
        assert status == 200
        sent = relay.wait_for(1, timeout=10)
        body = sent[0].body
        assert body["push_token"] == "fcm:kitchen-phone-token" and body["title"] == "Dryer"
        assert body["data"]["tag"] == "dryer" and body["data"]["progress"] == 10
        assert body["registration_info"]["webhook_id"] == "the-phones-own-webhook"
        wait_for(lambda: lanpush.metric("lanpush_ha_confirms_total") - confirms0 == 1, 5, "the confirm")
        # HA sees the device gone with relay credentials, and the relay's quota once it answered.
        wait_for(lambda: ha_state(ha, "sensor.kitchen_delivery_path") == "relay", SENSOR_INTERVAL + 2, "path relay")
        assert ha_state(ha, "binary_sensor.kitchen_lan_connected") == "off"
        remaining = wait_for(lambda: (v := ha_state(ha, "sensor.kitchen_relay_quota_remaining")) not in (None, "unknown") and v,
                             SENSOR_INTERVAL + 2, "the relay quota")
        assert int(float(remaining)) == 499, remaining  # the fake relay's answer to its first request
        assert ha_state(ha, "sensor.kitchen_relay_quota_resets") not in (None, "unknown")
    assert lanpush.metric("lanpush_ha_confirm_errors_total") == 0
    assert not any("Kitchen" in line for line in fallbacks(ha))


def test_ha_restart_resubscribes_while_lan_clients_keep_being_served(ha, lanpush):
    wait_subscribed(lanpush)
    client = lanpush.client("hall")
    pump_synced(client)
    wait_for(lambda: ha_state(ha, "binary_sensor.hall_lan_connected") == "on", SENSOR_INTERVAL + 2, "hall on")
    entities0 = lanpush_entities(ha)
    connects0 = lanpush.metric("lanpush_ha_connects_total")
    events0 = lanpush.metric("lanpush_ha_events_total")
    confirms0 = lanpush.metric("lanpush_ha_confirms_total")

    stopping = time.time()
    ha.stop()
    print(f"HA stopped in {time.time() - stopping:.1f} s")
    wait_for(lambda: all(s["channel"] == "down" and s["connection"] != "ready" for s in ha_status(lanpush).values()),
             10, "lanpush to see HA gone")
    assert lanpush.metric("lanpush_ha_connected") == 0 and lanpush.metric("lanpush_ha_channels") == 0
    # HA is down: the LAN path does not care.
    status, body = lanpush.request("POST", "/v1/push", {"targets": ["hall"], "title": "Hall", "message": "HA is down"},
                                   headers=lanpush.admin_headers())
    assert status == 202 and body["results"] == [{"target": "hall", "result": "delivered"}], body
    assert client.pump(lambda c: any(n.get("message") == "HA is down" for n in c.notifications), timeout=5)
    time.sleep(3)  # a few refused reconnects (backoff)

    took = ha.start()
    ha.start_seconds.append(took)
    running = time.time()
    resubscribed = wait_subscribed(lanpush, timeout=30)
    print(f"HA restarted in {took:.1f} s; lanpush re-subscribed {resubscribed:.1f} s after HA reached RUNNING")
    assert lanpush.metric("lanpush_ha_connects_total") > connects0
    assert lanpush.metric("lanpush_ha_registrations_total") == 2  # re-subscribed, never re-registered
    assert time.time() - running < 30
    # The same entities, none added; they show the present (the session lived through HA's restart).
    assert lanpush_entities(ha) == entities0
    assert ha_state(ha, "binary_sensor.hall_lan_connected") == "on"

    status, _ = ha.notify("mobile_app_hall", title="Door", message="Back door opened", data={"group": "doors"})
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == "Back door opened" for n in c.notifications), timeout=5)
    wait_for(lambda: lanpush.metric("lanpush_ha_confirms_total") - confirms0 == 1, 5, "the confirm")
    assert lanpush.metric("lanpush_ha_events_total") - events0 == 1
    assert lanpush.metric("lanpush_ha_confirm_errors_total") == 0
    assert fallbacks(ha, every=False) == []
    client.close()


def test_lanpush_restart_keeps_its_webhook_ids_and_ha_gets_no_duplicate_device(ha, lanpush):
    wait_subscribed(lanpush)
    before = {d: s["webhook_id"] for d, s in ha_status(lanpush).items()}
    devices0, entries0 = ha.registry()
    entities0 = lanpush_entities(ha)
    assert len(entities0) == 2 * len(SENSORS)
    assert lanpush.stop() == 0
    lanpush.start()
    wait_subscribed(lanpush)
    assert {d: s["webhook_id"] for d, s in ha_status(lanpush).items()} == before
    assert lanpush_entities(ha) == entities0  # registered again: the same entities, no duplicates
    assert lanpush.metric("lanpush_ha_registrations_total") == 0  # this process registered nothing
    devices1, entries1 = ha.registry()
    assert sorted(d["id"] for d in devices1) == sorted(d["id"] for d in devices0)
    assert sorted(e["entry_id"] for e in entries1) == sorted(e["entry_id"] for e in entries0)
    for device in ("kitchen", "hall"):
        assert len([d for d in devices1 if ["mobile_app", f"lanpush-{device}"] in d["identifiers"]]) == 1
    client = lanpush.client("kitchen")
    pump_synced(client)
    status, _ = ha.notify("mobile_app_kitchen", title="Oven", message="Preheated", data={"group": "kitchen"})
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == "Preheated" for n in c.notifications), timeout=5)
    client.close()


def test_a_renamed_device_updates_its_registration_under_the_same_webhook(ha, lanpush):
    wait_subscribed(lanpush)
    webhook = ha_status(lanpush)["hall"]["webhook_id"]
    assert lanpush.stop() == 0
    lanpush.config.write_text(lanpush.config.read_text().replace("name: Hall,", "name: Front Hall,"))
    lanpush.start()
    wait_subscribed(lanpush)
    wait_for(lambda: (s := ha_status(lanpush)["hall"])["device_name"] == "Front Hall" and s["registration"] == "registered",
             10, "update_registration")
    assert ha_status(lanpush)["hall"]["webhook_id"] == webhook
    services = wait_for(lambda: (s := ha.notify_services()) and "mobile_app_front_hall" in s and s, 10,
                        "notify.mobile_app_front_hall")
    assert "mobile_app_hall" not in services
    devices, _ = ha.registry()
    mine = [d for d in devices if ["mobile_app", "lanpush-hall"] in d["identifiers"]]
    assert len(mine) == 1 and mine[0]["name"] == "Front Hall"
    assert_notify_reaches_lan(ha, lanpush, "hall", "mobile_app_front_hall", "Front hall door opened")


def test_live_activity_reports_reach_no_ha_without_the_webhooks(ha, lanpush):
    """HA 2025.4.4 has no Live Activity bookkeeping: what a client reports of its Live Activities stays in lanpush.
    (What an HA that has it gets: test_home_assistant_webhooks.py, against a recording stand-in.)"""
    wait_subscribed(lanpush)
    assert all(s["live_activities"] is False and s["ha_version"] == "2025.4.4" for s in ha_status(lanpush).values())
    client = lanpush.client("kitchen")
    pump_synced(client)
    client.send({"type": "register", "supports_live_activities": True})
    client.send({"type": "live_activity_token", "tag": "washer_cycle", "token": "la-token-1", "expires_at": time.time() + 60})
    client.send({"type": "push_to_start_token", "token": "pts-1"})
    client.send({"type": "dismissed", "tag": "washer_cycle"})
    client.send({"type": "ping"})
    assert client.pump(lambda c: any(f["type"] == "pong" for f in c.frames), timeout=5)
    assert next(f for f in client.frames if f["type"] == "registered")["supports_live_activities"] is True
    time.sleep(1.5)  # HA writes its config entries a second after a change
    assert lanpush.metric("lanpush_ha_live_activity_calls_total") == 0
    assert ha_status(lanpush)["kitchen"]["live_activity_calls"] == 0
    assert "invalid webhook" not in ha.logtext(every=True)  # no webhook type HA does not know
    kitchen = next(e for e in ha.stored_config_entries() if e["data"].get("device_id") == "lanpush-kitchen")
    assert set(kitchen["data"]["app_data"]) == {"push_websocket_channel", "push_url", "push_token"}
    client.close()


def test_a_device_leaving_ha_goes_unavailable_and_one_removed_from_lanpush_leaves_ha(ha, lanpush):
    """Out of `home_assistant.devices`: HA keeps the device (and its notify action), its entities show `unavailable`.
    Out of lanpush's `devices`: its HA device, notify action and entities are removed."""
    wait_subscribed(lanpush)
    original = lanpush.config.read_text()
    porch = f"  - {{id: porch, name: Porch, token: {secrets.token_urlsafe(24)}}}\n"
    assert lanpush.stop() == 0
    with_porch = original.replace("devices:\n", "devices:\n" + porch, 1)
    lanpush.config.write_text(with_porch)
    lanpush.start()
    wait_subscribed(lanpush)
    assert len(wait_for(lambda: len(e := entities_of(ha, "porch")) == len(SENSORS) and e, 10, "porch's entities")) == 7
    wait_for(lambda: "mobile_app_porch" in ha.notify_services(), 10, "notify.mobile_app_porch")

    assert lanpush.stop() == 0
    lanpush.config.write_text(with_porch + "  devices: [kitchen, hall]\n")  # the home_assistant section is last
    lanpush.start()
    wait_subscribed(lanpush)
    wait_for(lambda: ha_status(lanpush)["porch"] == {"exposed": False, "sensors": "unavailable"}, 10, "porch unexposed")
    for entity_id in entities_of(ha, "porch").values():
        assert ha_state(ha, entity_id) == "unavailable", entity_id
    assert ha_device_id(ha, "porch") and "mobile_app_porch" in ha.notify_services()

    assert lanpush.stop() == 0
    lanpush.config.write_text(original)
    lanpush.start()
    wait_subscribed(lanpush)
    wait_for(lambda: ha_device_id(ha, "porch") is None, 10, "porch's HA device to be removed")
    assert entities_of(ha, "porch") == {}
    wait_for(lambda: "mobile_app_porch" not in ha.notify_services(), 10, "notify.mobile_app_porch to go")
    assert "device removed from lanpush: its HA device is removed too" in (lanpush.dir / "lanpushd.log").read_text()
    assert len(lanpush_entities(ha)) == 2 * len(SENSORS)


def test_a_lanpush_that_lost_its_state_replaces_its_old_registration_instead_of_adding_one(ha, lanpush):
    wait_subscribed(lanpush)
    before = {d: s["webhook_id"] for d, s in ha_status(lanpush).items()}
    devices0, entries0 = ha.registry()
    assert lanpush.stop() == 0
    lanpush.start("--reset-state")  # the state database moved aside: lanpush no longer knows its webhook_ids
    wait_subscribed(lanpush)
    after = {d: s["webhook_id"] for d, s in ha_status(lanpush).items()}
    assert all(after[d] != before[d] for d in before)
    assert lanpush.metric("lanpush_ha_registrations_total") == 2
    assert "lanpush no longer knows (its state was lost); replacing it" in (lanpush.dir / "lanpushd.log").read_text()
    devices1, entries1 = ha.registry()
    assert len(entries1) == len(entries0)  # two lanpush entries replaced, the control phone's kept
    for device in ("kitchen", "hall"):
        assert len([d for d in devices1 if ["mobile_app", f"lanpush-{device}"] in d["identifiers"]]) == 1
        # The old registration's entities went with it; the new one has its own, named from the device's name.
        slug = ha_status(lanpush)[device]["notify_service"].removeprefix("notify.mobile_app_")  # hall is Front Hall now
        assert entities_of(ha, device)["connected"] == f"binary_sensor.{slug}_lan_connected"
    assert len(lanpush_entities(ha)) == 2 * len(SENSORS)
    client = lanpush.client("kitchen")
    pump_synced(client)
    status, _ = ha.notify("mobile_app_kitchen", title="Oven", message="Done")
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == "Done" for n in c.notifications), timeout=5)
    client.close()
    assert fallbacks(ha, every=False) == []


def test_a_device_added_at_run_time_joins_ha_and_a_removed_one_leaves_it(ha, lanpush):
    """A device added through the API (as pairing adds one) becomes an HA mobile_app device, with its notify action
    and entities, while lanpushd runs (no restart); removed through the API, it leaves HA again."""
    wait_subscribed(lanpush)
    status, added = lanpush.request("POST", "/v1/devices", {"id": "garage", "name": "Garage"}, headers=lanpush.admin_headers())
    assert status == 201, added
    wait_for(lambda: "mobile_app_garage" in ha.notify_services(), 20, "notify.mobile_app_garage")
    wait_subscribed(lanpush)
    assert ha_status(lanpush)["garage"]["registration"] == "registered"
    assert len(wait_for(lambda: len(e := entities_of(ha, "garage")) == len(SENSORS) and e, 10, "garage's entities")) == len(SENSORS)
    # It is HA's like any other: a notification from HA reaches its LAN session.
    lanpush.tokens["garage"] = added["token"]
    assert_notify_reaches_lan(ha, lanpush, "garage", "mobile_app_garage", "door open", timeout=10)

    status, body = lanpush.request("DELETE", "/v1/devices/garage", headers=lanpush.admin_headers())
    assert status in (200, 204), body
    wait_for(lambda: ha_device_id(ha, "garage") is None, 20, "garage's HA device to be removed")
    wait_for(lambda: "mobile_app_garage" not in ha.notify_services(), 10, "notify.mobile_app_garage to go")
    assert entities_of(ha, "garage") == {}
    assert len(lanpush_entities(ha)) == 2 * len(SENSORS)


def test_a_device_removed_while_ha_is_away_leaves_ha_after_a_lanpush_restart(ha, lanpush):
    """Removed through the API while HA is down, then lanpushd restarted before HA is back: its stored registration
    outlives the device, so the new process still removes it from HA once HA is up."""
    wait_subscribed(lanpush)
    status, added = lanpush.request("POST", "/v1/devices", {"id": "shed", "name": "Shed"}, headers=lanpush.admin_headers())
    assert status == 201, added
    wait_subscribed(lanpush)
    assert ha_device_id(ha, "shed") and "mobile_app_shed" in ha.notify_services()

    ha.stop()
    wait_for(lambda: all(s.get("connection") != "ready" for s in ha_status(lanpush).values()), 10, "lanpush to see HA gone")
    status, body = lanpush.request("DELETE", "/v1/devices/shed", headers=lanpush.admin_headers())
    assert status in (200, 204), body
    assert lanpush.stop() == 0
    lanpush.start()
    ha.start_seconds.append(ha.start())
    wait_subscribed(lanpush)
    wait_for(lambda: ha_device_id(ha, "shed") is None, 20, "shed's HA device to be removed")
    wait_for(lambda: "mobile_app_shed" not in ha.notify_services(), 10, "notify.mobile_app_shed to go")
    assert entities_of(ha, "shed") == {}
    assert "device removed from lanpush: its HA device is removed too" in (lanpush.dir / "lanpushd.log").read_text()
    assert len(lanpush_entities(ha)) == 2 * len(SENSORS)


def test_a_device_away_falls_back_through_the_companion_apps_notify_action_and_the_hand_back_ends_it_there(ha, lanpush):
    """A LAN client without the companion app's relay credentials (the Scripting app's tokens belong to Scripting)
    names the phone's companion-app target instead: while the device is gone, its paced updates go through HA's own
    notify.mobile_app_<phone>, so HA's registration for the companion app and HA's relay (the fake, at the companion
    registration's push_url) carry them; once a LAN session is back for relay.hand_back_after, the hand-back's
    clear_notification goes the same way."""
    wait_subscribed(lanpush)
    with FakeRelay() as relay:
        status, phone = ha.rest("POST", "/api/mobile_app/registrations", {
            "device_id": "pocket-phone", "app_id": "io.robbie.HomeAssistant", "app_name": "Home Assistant",
            "app_version": "2025.4", "device_name": "Pocket Phone", "manufacturer": "Apple", "model": "iPhone",
            "os_name": "iOS", "os_version": "18.0", "supports_encryption": False,
            "app_data": {"push_url": relay.ios_url, "push_token": "fcm:pocket-companion"}})
        assert status == 201, phone
        wait_for(lambda: "mobile_app_pocket_phone" in ha.notify_services(), 10, "notify.mobile_app_pocket_phone")
        status, added = lanpush.request("POST", "/v1/devices", {"id": "pocket", "fallback": "notify.mobile_app_pocket_phone"},
                                        headers=lanpush.admin_headers())
        assert status == 201 and added["fallback"] == "notify.mobile_app_pocket_phone", added
        lanpush.tokens["pocket"] = added["token"]
        try:
            client = lanpush.client("pocket")
            pump_synced(client)
            client.close()
            wait_for(lambda: not device_json(lanpush, "pocket")["connected"], 5, "pocket to be gone")
            status, _ = lanpush.request("POST", "/v1/push", {
                "targets": ["pocket"], "title": "Washing Machine", "message": "Cycle started",
                "data": {"tag": "washer_cycle", "live_update": True, "progress": 0, "progress_max": 3600}},
                headers=lanpush.admin_headers())
            assert status == 202
            start = relay.wait_for(1, timeout=10, answered=True)[0]
            # HA posted it, with the companion app's credentials: lanpush never held them.
            assert start.body["push_token"] == "fcm:pocket-companion"
            assert start.body["registration_info"]["app_id"] == "io.robbie.HomeAssistant"
            assert start.body["title"] == "Washing Machine" and start.body["message"] == "Cycle started"
            assert start.body["data"]["tag"] == "washer_cycle" and start.body["data"]["progress_max"] == 3600
            assert start.answer_status == 201
            # HA answers lanpush once its relay has answered HA.
            wait_for(lambda: device_json(lanpush, "pocket").get("relay", {}).get("shown") == ["washer_cycle"], 5,
                     "the start shown through the fallback")

            back = lanpush.client("pocket")
            pump_synced(back)
            assert back.activities["washer_cycle"]["state"]["message"] == "Cycle started"
            end = relay.wait_for(2, timeout=10, answered=True)[1]
            assert end.body["message"] == "clear_notification" and end.body["data"] == {"tag": "washer_cycle"}
            assert end.body["push_token"] == "fcm:pocket-companion"
            # The companion app ends the activity with that tag (its clear_notification command).
            assert end.sent["apns"]["payload"]["homeassistant"] == {"command": "clear_notification", "tag": "washer_cycle"}
            wait_for(lambda: "shown" not in device_json(lanpush, "pocket").get("relay", {}), 5, "nothing shown by the relay path")
            back.close()
        finally:
            lanpush.request("DELETE", "/v1/devices/pocket", headers=lanpush.admin_headers())
            wait_for(lambda: "mobile_app_pocket" not in ha.notify_services(), 20, "notify.mobile_app_pocket to go")


def test_a_missed_confirm_is_recovered_from_and_the_notification_arrives_once(ha, lanpush):
    """HA gives a confirm 10 s, then posts the event to the push_url and tears the channel down without telling
    the client. With lanpushd frozen (SIGSTOP) past that, the event arrives once (the channel's copy and the
    push_url's carry the same hass_confirm_id); HA answers the late confirm with an error, which is how lanpush
    learns of the teardown: it re-subscribes, and the next notification takes the channel again.
    Last in the module: it puts a fallback line in HA's log on purpose."""
    wait_subscribed(lanpush)
    client = lanpush.client("kitchen")
    pump_synced(client)
    kitchen_fallbacks = lambda: [line for line in fallbacks(ha, every=False) if "Kitchen" in line]  # noqa: E731
    assert kitchen_fallbacks() == []
    errors0 = lanpush.metric("lanpush_ha_confirm_errors_total")
    lanpush.proc.send_signal(signal.SIGSTOP)
    try:
        status, _ = ha.notify("mobile_app_kitchen", title="Door", message="while lanpush was frozen")
        assert status == 200
        time.sleep(11.5)  # past PUSH_CONFIRM_TIMEOUT: HA has torn the channel down and is posting to the push_url
    finally:
        lanpush.proc.send_signal(signal.SIGCONT)
    wait_for(kitchen_fallbacks, 10, "HA's push_url fallback line")
    assert client.pump(lambda c: any(n.get("message") == "while lanpush was frozen" for n in c.notifications), timeout=10)
    client.pump(timeout=1)
    assert [n.get("message") for n in client.notifications] == ["while lanpush was frozen"]  # once, not twice
    wait_for(lambda: lanpush.metric("lanpush_ha_confirm_errors_total") == errors0 + 1, 5, "HA's answer to the late confirm")
    wait_subscribed(lanpush, timeout=10)

    confirms0 = lanpush.metric("lanpush_ha_confirms_total")
    status, _ = ha.notify("mobile_app_kitchen", title="Door", message="after the freeze")
    assert status == 200
    assert client.pump(lambda c: any(n.get("message") == "after the freeze" for n in c.notifications), timeout=5)
    wait_for(lambda: lanpush.metric("lanpush_ha_confirms_total") == confirms0 + 1, 5, "the confirm")
    assert len(kitchen_fallbacks()) == 1  # the channel carried it
    client.close()
