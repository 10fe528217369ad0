@testable import LanpushCore

/// The scenarios behind `Tests/Fixtures/protocol/*.json`. Payloads are the Home Assistant companion docs'
/// examples (Live Activities: washer, EV charging, dishwasher) and Aivi templates, posted as HA posts them.
extension VectorScenario {
    static let washerStart = #"{"title":"Washing Machine","message":"Cycle started","data":{"tag":"washer_cycle","live_update":true}}"#
    static let washerRinse = #"""
        {"title":"Washing Machine","message":"Rinsing · 1 of 2","data":{"tag":"washer_cycle","live_update":true,
         "progress":900,"progress_max":3600,"chronometer":true,"when":2700,"when_relative":true,
         "notification_icon":"mdi:washing-machine","notification_icon_color":"#2196F3","color":"#2196F3"}}
        """#
    static let washerDone = #"""
        {"title":"Washing Machine","message":"Cycle complete","data":{"tag":"washer_cycle","live_update":true,
         "progress":3600,"progress_max":3600,"notification_icon":"mdi:washing-machine","notification_icon_color":"#4CAF50",
         "color":"#4CAF50"}}
        """#
    static let washerClear = #"{"message":"clear_notification","data":{"tag":"washer_cycle"}}"#

    static func ev(_ percent: Int) -> String {
        ##"{"title":"EV Charging","message":"Charging · \##(percent)%","data":{"tag":"ev-charging","live_update":true,"critical_text":"\##(percent)%","progress":\##(percent),"progress_max":100,"notification_icon":"mdi:ev-station","notification_icon_color":"#4CAF50"}}"##
    }

    static let dishwasher = #"""
        {"title":"Dishwasher","message":"Pre-wash in progress","data":{"tag":"dishwasher","live_update":true,
         "critical_text":"Pre-wash","progress":20,"progress_max":100,"notification_icon":"mdi:dishwasher",
         "notification_icon_color":"#26C6DA"}}
        """#

    static func door(_ message: String, tag: String? = nil) -> String {
        let tagMember = tag.map { #","tag":"\#($0)""# } ?? ""
        return #"{"title":"Front door","message":"\#(message)","data":{"group":"doors"\#(tagMember)}}"#
    }

    static func segmented(_ value: Double, header: String) -> String {
        #"""
        {"title":"Supercharger","message":"Charging","data":{"tag":"supercharger","live_update":true,"template":{
         "template":"progress","icon":"bolt.car","header_left":{"value":"\#(header)","text_color":"green"},
         "header_right":{"value":"3 min left"},"progress":{"style":"segmented","value":\#(value),"display":"layered",
         "segments":[{"value":0.8,"fill_color":"green","track_color":"gray","label":"Standard"},
                     {"value":0.2,"fill_color":"green","track_color":"gray","track_fill":"hatched","label":"Extended"}]},
         "footer_left":{"value":"Supercharger","text_color":"gray"},"compact_value":{"value":"\#(header)"}}}}
        """#
    }

    static let monitor = #"""
        {"title":"Vacuum","message":"Mopping","data":{"tag":"supercharger","live_update":true,"template":{
         "template":"monitor","icon":"robotic.vacuum.and.ellipsis","left_column":{"value":{"value":"Mopping","text_color":"indigo"},
         "footer":"In living room"},"right_column":{"value":{"value":"20.1 m²"},"footer":"Battery: 87%"}}}}
        """#

    static let all: [VectorScenario] = [
        VectorScenario("snapshot", "A fresh client: the queued notification, then a snapshot of every visible activity (active, stale, ended), then synced.") { r in
            r.push(washerRinse)
            r.push(#"{"title":"Laundry","message":"Drying","data":{"tag":"dryer","live_update":true,"stale_date":1700000060}}"#)
            r.push(dishwasher)
            r.end("dishwasher", dismissal: .default)
            r.push(door("Front door opened"))
            r.advance(by: 120)
            r.connect()
            r.read()
        },
        VectorScenario("start", "Starts as they happen: a plain one, one with stale date, relevance and an alert, an Aivi template.") { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.read()
            r.push(#"{"title":"EV Charging","message":"Plugged in","data":{"tag":"ev-charging","live_update":true,"stale_date":1700003600,"relevance_score":0.8,"alert":{"title":"EV","body":"Charging started"}}}"#)
            r.read()
            r.push(segmented(0.5, header: "50%"))
            r.read()
        },
        VectorScenario("merged-updates", "A reader that falls behind gets one update per tag carrying the newest seq (gaps), removed keys as null, nested template changes merged.") { r in
            r.connect()
            r.read()
            r.push(washerRinse)
            r.push(segmented(0.5, header: "50%"))
            r.read()
            r.push(washerDone)
            r.push(segmented(0.7, header: "70%"))
            r.push(#"{"message":"Unloading","data":{"tag":"washer_cycle","live_update":true,"silent":true}}"#)
            r.push(segmented(0.9, header: "90%"))
            r.read()
        },
        VectorScenario("end", "The washer cycle: start, updates, clear_notification ends and dismisses it at once (an end with phase dismissed, then a clear of its tag). EV charging ended through the API with the default policy stays visible; dismissed again later it takes the new dismissal date (an end with an empty patch); its dismissal date comes and it goes.") { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.read()
            r.push(washerRinse)
            r.read()
            r.push(washerDone)
            r.read()
            r.push(washerClear)
            r.read()
            r.push(ev(45))
            r.read()
            r.end("ev-charging", dismissal: .default)
            r.read()
            r.advance(by: 60)
            r.end("ev-charging", dismissal: .after(600))
            r.read()
            r.advance(by: 600)
            r.read()
        },
        VectorScenario("lifecycle", "Time and the user act: past its stale date an activity turns stale, an update makes it active again, an update without a stale date removes it, a dismissal on the phone removes the activity.") { r in
            r.connect()
            r.read()
            r.push(#"{"title":"Laundry","message":"Drying","data":{"tag":"dryer","live_update":true,"stale_date":1700000060}}"#)
            r.read()
            r.advance(by: 61)
            r.read()
            r.push(#"{"title":"Laundry","message":"Still drying","data":{"tag":"dryer","live_update":true,"stale_date":1700000600}}"#)
            r.read()
            // Stale dates belong to each update: one without says "stale_date": null, so the client drops the old one.
            r.push(#"{"title":"Laundry","message":"Almost dry","data":{"tag":"dryer","live_update":true}}"#)
            r.read()
            r.dismissedByUser("dryer")
            r.read()
        },
        VectorScenario("notifications", "Plain notifications are never merged: each keeps its own seq, interleaved with activity frames.") { r in
            r.connect()
            r.read()
            r.push(door("Front door opened", tag: "door"))
            r.push(washerStart)
            r.push(door("Front door closed", tag: "door"))
            r.push(#"{"title":"Mail","message":"The mail is here","data":{"group":"mail","url":"/lovelace/mail"}}"#)
            r.push(washerRinse)
            r.read()
        },
        VectorScenario("clear", "clear_notification for a tag with no live activity clears the plain notifications with that tag; an unknown tag clears nothing.") { r in
            r.connect()
            r.read()
            r.push(door("Front door opened", tag: "door"))
            r.push(door("Back door opened", tag: "back"))
            r.read()
            r.push(#"{"message":"clear_notification","data":{"tag":"door"}}"#)
            r.read()
            r.push(#"{"message":"clear_notification","data":{"tag":"garage"}}"#)
            r.read()
        },
        VectorScenario("replay-after-resume", "A client away for a while resumes with its epoch and seq: replay of the difference (merged per tag, an activity that started and ended unseen), then synced.") { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.push(ev(5))
            r.read()
            r.disconnect()
            r.push(washerRinse)
            r.push(ev(10))
            r.push(#"{"title":"Laundry","message":"Drying","data":{"tag":"dryer","live_update":true}}"#)
            r.push(door("Front door opened"))
            r.push(ev(15))
            r.push(dishwasher)
            r.end("dishwasher", dismissal: .after(600))
            r.connect()
            r.read()
        },
        VectorScenario("new-epoch", "The gateway restarted without its durable state: a resume from the old epoch gets the queued notifications (the one already held is not shown twice), then a snapshot in the new epoch.") { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.push(ev(5))
            r.push(door("Front door opened"))
            r.read(ack: false)
            r.disconnect()
            r.restartUnclean(epoch: "epoch-b")
            r.push(washerRinse)
            r.end("ev-charging", dismissal: .immediate)
            r.connect()
            r.read()
        },
        VectorScenario("out-of-window-merge", "A window of 2 unacknowledged frames: the session stalls until it acks, and what changed meanwhile arrives merged per tag.", window: 2) { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.push(ev(5))
            r.push(dishwasher)
            r.read(ack: false)
            r.push(washerRinse)
            r.push(ev(10))
            r.push(ev(15))
            r.push(door("Front door opened"))
            r.read(ack: false)
            r.acknowledge()
            r.read(max: 2, ack: true)
            r.push(washerDone)
            r.push(ev(20))
            r.read(max: 2, ack: true)
            r.read()
        },
        VectorScenario("unsafe-resume", "A merged frame overtook an older change of another tag: resuming from its seq would skip that change, so the client gets a snapshot in the same epoch.", window: 1) { r in
            r.connect()
            r.read()
            r.push(washerStart)
            r.push(ev(5))
            r.push(washerRinse)
            r.read(max: 1, ack: false)
            r.disconnect()
            r.connect()
            r.read()
        },
        VectorScenario("templates", "Aivi templates travel in the state under `template`: a segmented progress bar moves (nested patch), then becomes a monitor (keys of the old template removed).") { r in
            r.connect()
            r.read()
            r.push(segmented(0.5, header: "50%"))
            r.read()
            r.push(segmented(0.9, header: "90%"))
            r.read()
            r.push(monitor)
            r.read()
        },
    ]
}
