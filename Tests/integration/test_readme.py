"""The README's commands and payloads, run against a real lanpushd (every command in the README is exercised)."""
import json
import re
import subprocess
from pathlib import Path

import yaml

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def blocks(lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", README, re.S)


def test_readme_curl_example_is_accepted(gateway):
    gw = gateway(devices=("kitchen-tablet",))
    c = gw.client("kitchen-tablet")
    c.pump(lambda c: c.frames)
    curl = next(b for b in blocks("sh") if "curl -X POST" in b and "/v1/push" in b)
    command = curl.replace("HOST", f"127.0.0.1").replace(":8765", f":{gw.port}")
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=20,
                       env={"TOKEN": gw.admin, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"] == [{"target": "kitchen-tablet", "result": "delivered"}]
    assert c.pump(lambda c: c.activities.get("washer_cycle", {}).get("state", {}).get("progress") == 900)


def test_readme_automation_and_rest_command_payloads_are_accepted(gateway):
    gw = gateway(devices=("kitchen-tablet",))
    automation = next(b for b in blocks("yaml") if "automations.yaml" in b)
    data = yaml.safe_load(automation)[0]["actions"][0]["data"]
    data["message"] = "Rinsing"  # what HA renders the template to
    status, body = gw.request("POST", "/v1/push", {"targets": ["kitchen-tablet"], **data}, headers=gw.admin_headers())
    assert status == 202, body
    rest = next(b for b in blocks("yaml") if "rest_command" in b)
    payload = rest.split("payload: >-", 1)[1]
    rendered = " ".join(line.strip() for line in payload.strip().splitlines())
    for key, value in {"title": "EV Charging", "message": "Charging 45%", "tag": "ev-charging", "progress": "45"}.items():
        rendered = rendered.replace("{{ %s }}" % key, value)
    status, body = gw.request("POST", "/v1/push", json.loads(rendered), headers=gw.admin_headers())
    assert status == 202, body
    status, listing = gw.get("/v1/activities?device=kitchen-tablet")
    assert {a["tag"] for a in listing["activities"]} == {"washer_cycle", "ev-charging"}
