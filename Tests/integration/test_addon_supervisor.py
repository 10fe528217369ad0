"""The add-on as the Home Assistant Supervisor sees it: its own validation code (release 2026.02.3, the last that runs
on this machine's Python 3.13), not a re-reading of its rules — `addons/validate.py` for config.yaml and translations,
`addons/options.py` for the options against the schema (the UI's form and lanpushd's options.json), `store/validate.py`
for repository.yaml, and the store's own scan of this repository for add-ons.

The Supervisor is not on PyPI and nothing is downloaded at test time: its source and a Python 3.13 venv with its
requirements are read from `$LANPUSH_SUPERVISOR` (a folder holding `supervisor/` and `venv/`) or from
`~/.cache/lanpush/supervisor-2026.02.3` and `~/.cache/lanpush/supervisor-venv`; `scripts/supervisor-source` makes
them from a checkout of home-assistant/supervisor. Without them the module is skipped, saying so."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lanpush"


def locate():
    if os.environ.get("LANPUSH_SUPERVISOR"):
        base = Path(os.environ["LANPUSH_SUPERVISOR"])
        return base, base / "venv" / "bin" / "python"
    return CACHE / "supervisor-2026.02.3", CACHE / "supervisor-venv" / "bin" / "python"


SOURCE, PYTHON = locate()
pytestmark = pytest.mark.skipif(
    not (SOURCE / "supervisor" / "addons" / "validate.py").exists() or not PYTHON.exists(),
    reason=f"the Supervisor's source is not here ({SOURCE}); scripts/supervisor-source makes it from a checkout")

CHECK = r'''
import asyncio, json, sys
from pathlib import Path
import voluptuous as vol
from voluptuous.humanize import humanize_error
from supervisor.addons.validate import SCHEMA_ADDON_CONFIG, SCHEMA_ADDON_TRANSLATIONS
from supervisor.addons.options import AddonOptions, UiOptions
from supervisor.store.validate import SCHEMA_REPOSITORY_CONFIG
from supervisor.store.data import StoreData
from supervisor.utils.common import read_json_or_yaml_file

root = Path(sys.argv[1])
addon = root / "Config" / "addon"
out = {}

class Core:  # what the validators reach for: an event loop for the store's file scan; no hardware is used
    def __init__(self):
        self.loop = asyncio.new_event_loop()
    def run_in_executor(self, funct, *args):
        return self.loop.run_in_executor(None, funct, *args)

core = Core()
raw = read_json_or_yaml_file(addon / "config.yaml")
try:
    config = SCHEMA_ADDON_CONFIG(raw)
    out["config"] = "ok"
except vol.Invalid as e:
    out["config"] = humanize_error(raw, e)
    print(json.dumps(out)); sys.exit()

def options(o):
    try:
        AddonOptions(core, config["schema"], config["name"], config["slug"])(o)
        return "ok"
    except vol.Invalid as e:
        return str(e)

out["defaults"] = options(config["options"])
good = json.loads(sys.argv[2])
out["good"] = options(good)
out["short_token"] = options({**good, "devices": [{"id": "tablet", "token": "12345"}]})
out["bad_routing"] = options({**good, "devices": [{"id": "tablet", "token": "x" * 32, "notifications": "mqtt"}]})
# An upgrade: the Supervisor starts the add-on with {**new defaults, **options saved under the previous release}.
saved = json.loads(sys.argv[3])
out["upgrade"] = options({**config["options"], **saved})
out["ui"] = len(UiOptions(core)(config["schema"]))
for t in sorted((addon / "translations").glob("*.yaml")):
    try:
        SCHEMA_ADDON_TRANSLATIONS(read_json_or_yaml_file(t))
        out["translation " + t.stem] = "ok"
    except vol.Invalid as e:
        out["translation " + t.stem] = str(e)
try:
    SCHEMA_REPOSITORY_CONFIG(read_json_or_yaml_file(root / "repository.yaml"))
    out["repository"] = "ok"
except vol.Invalid as e:
    out["repository"] = str(e)
store = StoreData(core)
found = core.loop.run_until_complete(store._read_addons_folder(root, "lanpush"))
out["store"] = {slug: {"location": Path(a["location"]).relative_to(root).as_posix(), "translations": sorted(a["translations"])}
                for slug, a in found.items()}
print(json.dumps(out))
'''

GOOD = {
    "listen": "0.0.0.0:8765", "admin_token": "a" * 32, "viewer_token": "", "open_metrics": False, "log_level": "info",
    "devices": [{"id": "kitchen-tablet", "name": "Kitchen", "token": "t" * 32, "notifications": "lan"}],
    "session": {"ping_interval": 10, "ping_timeout": 10, "ack_timeout": 10, "window": 32},
    "limits": {"max_body": 65536, "max_sessions": 10000, "notification_queue_bytes": 1048576, "resume_history_bytes": 8388608, "auth_failures": 10,
               "auth_window": 60, "pairing_failures": 60, "header_timeout": 5, "pending_per_address": 256},
    "relay": {"upstream": "https://mobile-apps.home-assistant.io", "min_update_interval": 15, "starts_per_hour": 10,
              "quota": 500, "quota_reserve": 50, "timeout": 10},
    "mdns": {"enabled": True, "name": "", "interfaces": ["eth0"]},
    "tls": {"enabled": True, "cert": "", "key": "", "plain": False},
    "store": {"synchronous": "normal", "cache_bytes": 1048576},
    "home_assistant": {"enabled": True, "url": "", "token": "", "devices": ["kitchen-tablet"], "sensor_interval": 2},
}

# Options as the 0.1.0 add-on's form saved them (every section, one limit changed, a device of its time).
SAVED_BY_0_1_0 = {
    "listen": "0.0.0.0:8765", "admin_token": "a" * 32, "viewer_token": "", "open_metrics": False, "log_level": "info",
    "devices": [{"id": "kitchen-tablet", "name": "Kitchen", "token": "t" * 32}],
    "session": {"ping_interval": 10, "ping_timeout": 10, "ack_timeout": 10, "window": 32},
    "limits": {"max_body": 131072, "max_sessions": 10000, "notification_queue": 100},
    "relay": {"upstream": "https://mobile-apps.home-assistant.io", "min_update_interval": 15, "starts_per_hour": 10,
              "quota": 500, "quota_reserve": 50, "timeout": 10},
    "mdns": {"enabled": True, "name": "", "interfaces": []},
    "store": {"synchronous": "normal"},
    "home_assistant": {"enabled": False, "url": "", "token": "", "devices": []},
}


@pytest.fixture(scope="module")
def verdict():
    script = ROOT / "test-artifacts" / "supervisor_check.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(CHECK)
    r = subprocess.run([str(PYTHON), str(script), str(ROOT), json.dumps(GOOD), json.dumps(SAVED_BY_0_1_0)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(SOURCE)))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_supervisor_accepts_config_yaml(verdict):
    assert verdict["config"] == "ok"


def test_the_default_options_and_a_full_set_pass_the_schema(verdict):
    assert verdict["defaults"] == "ok" and verdict["good"] == "ok"
    assert verdict["ui"] > 0  # the options form renders


def test_options_saved_by_the_previous_release_still_start_the_addon(verdict):
    """Keys added inside a section since 0.1.0 must be optional, or an upgraded add-on refuses to start."""
    assert verdict["upgrade"] == "ok", verdict["upgrade"]


def test_the_schema_refuses_what_lanpushd_would_refuse(verdict):
    # lanpushd needs device tokens of 16 characters or more; the form must not accept a 5-character one.
    assert verdict["short_token"] != "ok"
    assert verdict["bad_routing"] != "ok"


def test_translations_and_repository_pass(verdict):
    assert {k: v for k, v in verdict.items() if k.startswith("translation")} == {"translation en": "ok"}
    assert verdict["repository"] == "ok"


def test_the_store_finds_exactly_the_addon_in_this_repository(verdict):
    assert verdict["store"] == {"lanpush_lanpush": {"location": "Config/addon", "translations": ["en"]}}
