"""Regenerates Tests/Fixtures/state-v1/lanpush.sqlite with the lanpushd of schema v1 (run from the repo root with
the integration venv: .venv-test/bin/python Tests/Fixtures/make_state_v1.py). Keep the committed file as made by
that version: later schema versions must migrate it."""
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from gateway import Gateway  # noqa: E402

gw = Gateway(devices=("phone", "tablet")).start()
for body in [
    {"targets": ["phone"], "title": "Washing Machine", "message": "Rinsing",
     "data": {"tag": "washer_cycle", "live_update": True, "progress": 900, "progress_max": 3600,
              "notification_icon": "mdi:washing-machine", "notification_icon_color": "#2196F3"}},
    {"targets": ["phone", "tablet"], "title": "EV Charging", "message": "Charging · Est. 45 min remaining",
     "data": {"tag": "ev-charging", "live_update": True, "critical_text": "45%", "progress": 45, "progress_max": 100}},
    {"targets": ["phone"], "title": "Door", "message": "Front door opened", "data": {"group": "doors"}},
]:
    status, answer = gw.request("POST", "/v1/push", body, headers=gw.admin_headers())
    assert status == 202, answer
assert gw.stop() == 0
target = Path(__file__).resolve().parent / "state-v1"
target.mkdir(exist_ok=True)
shutil.copy(gw.state / "lanpush.sqlite", target / "lanpush.sqlite")
print("wrote", target / "lanpush.sqlite")
