import LanpushCore

/// Notify payloads from the Home Assistant companion docs (Live Activities) and the Aivi template docs.
enum Payloads {
    static let washer: [JSONValue] = [
        ["title": "Washing Machine", "message": "Cycle started", "data": ["tag": "washer_cycle", "live_update": true]],
        [
            "title": "Washing Machine", "message": "Rinsing · 1 of 2",
            "data": [
                "tag": "washer_cycle", "live_update": true, "progress": 900, "progress_max": 3600, "chronometer": true,
                "when": 2700, "when_relative": true, "notification_icon": "mdi:washing-machine",
                "notification_icon_color": "#2196F3", "color": "#2196F3",
            ],
        ],
        [
            "title": "Washing Machine", "message": "Cycle complete",
            "data": [
                "tag": "washer_cycle", "live_update": true, "progress": 3600, "progress_max": 3600,
                "notification_icon": "mdi:washing-machine", "notification_icon_color": "#4CAF50", "color": "#4CAF50",
            ],
        ],
    ]

    static let washerClear: JSONValue = ["message": "clear_notification", "data": ["tag": "washer_cycle"]]

    static func ev(_ percent: Int) -> JSONValue {
        [
            "title": "EV Charging", "message": .string("Charging · \(percent)%"),
            "data": [
                "tag": "ev-charging", "live_update": true, "critical_text": .string("\(percent)%"),
                "progress": .number(Double(percent)), "progress_max": 100, "notification_icon": "mdi:ev-station",
                "notification_icon_color": "#4CAF50",
            ],
        ]
    }

    /// Aivi's progress template with a segmented bar (standard range, then a hatched extended one).
    static func segmented(_ value: Double) -> JSONValue {
        let pct = JSONValue.string("\(Int((value * 100).rounded()))%")
        return [
            "title": "Supercharger", "message": "Charging",
            "data": [
                "tag": "supercharger", "live_update": true,
                "template": [
                    "template": "progress", "icon": "bolt.car", "header_left": ["value": pct, "text_color": "green"],
                    "header_right": ["value": "3 min left"],
                    "progress": [
                        "style": "segmented", "value": .number(value), "display": "layered",
                        "segments": [
                            ["value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard"],
                            [
                                "value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched",
                                "label": "Extended",
                            ],
                        ],
                    ],
                    "footer_left": ["value": "Supercharger", "text_color": "gray"],
                    "footer_right": ["value": "Est. $4.85"], "compact_value": ["value": pct],
                ],
            ],
        ]
    }

    static func counter(_ i: Int, tags: Int, total: Int, title: String = "T") -> JSONValue {
        [
            "title": .string(title), "message": .string("m\(i)"),
            "data": ["tag": .string("t\(i % tags)"), "live_update": true, "progress": .number(Double(i)), "progress_max": .number(Double(total))],
        ]
    }
}
