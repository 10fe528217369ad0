"""Notify payloads from HA's Live Activity docs (the washer cycle, EV charging) and Aivi's template docs (the
segmented Supercharger bar), as HA's `rest_command` or `curl` posts them to `POST /v1/push`."""

WASHER = [
    {"title": "Washing Machine", "message": "Cycle started", "data": {"tag": "washer_cycle", "live_update": True}},
    {"title": "Washing Machine", "message": "Rinsing · 1 of 2",
     "data": {"tag": "washer_cycle", "live_update": True, "progress": 900, "progress_max": 3600, "chronometer": True,
              "when": 2700, "when_relative": True, "notification_icon": "mdi:washing-machine",
              "notification_icon_color": "#2196F3", "color": "#2196F3"}},
    {"title": "Washing Machine", "message": "Cycle complete",
     "data": {"tag": "washer_cycle", "live_update": True, "progress": 3600, "progress_max": 3600,
              "notification_icon": "mdi:washing-machine", "notification_icon_color": "#4CAF50", "color": "#4CAF50"}},
]

WASHER_CLEAR = {"message": "clear_notification", "data": {"tag": "washer_cycle"}}


def ev(percent):
    return {"title": "EV Charging", "message": f"Charging · {percent}%",
            "data": {"tag": "ev-charging", "live_update": True, "critical_text": f"{percent}%", "progress": percent,
                     "progress_max": 100, "notification_icon": "mdi:ev-station",
                     "notification_icon_color": "#4CAF50"}}


def segmented(value):
    pct = f"{round(value * 100)}%"
    return {"title": "Supercharger", "message": "Charging",
            "data": {"tag": "supercharger", "live_update": True, "template": {
                "template": "progress", "icon": "bolt.car", "header_left": {"value": pct, "text_color": "green"},
                "header_right": {"value": "3 min left"},
                "progress": {"style": "segmented", "value": value, "display": "layered", "segments": [
                    {"value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard"},
                    {"value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched",
                     "label": "Extended"}]},
                "footer_left": {"value": "Supercharger", "text_color": "gray"},
                "footer_right": {"value": "Est. $4.85"}, "compact_value": {"value": pct}}}}
