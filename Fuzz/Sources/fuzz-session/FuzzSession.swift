import FuzzSupport
import LanpushCore
import LanpushGateway
import LanpushTesting

#if canImport(Glibc)
import Glibc
#endif

/// The LAN protocol from the client's side, driven in-process (`TestGateway`: the real parts, no sockets): the input
/// is a program of client steps — sessions opened in lanpush.v1 or v2, raw frames, well-formed frames with hostile
/// values (auth with any `version`, subscribe/resume, ack, register, tokens, dismissals), updates and notifications
/// arriving, time passing, sessions closing, choking, resuming. After every step: every frame the gateway sent is a
/// JSON object with a `type` (a v2 array read back as its object: an array that reads as none fails); events reach a session
/// in increasing seq; a publisher's accepts only grow and never pass an item still to be rejected; a session is only
/// ever closed with a documented code. At the end, a session that read and acked everything holds what a fresh
/// subscriber holds once it has too (unless it resumed from a point it never held, which the gateway cannot tell).
@main
struct FuzzSession {
    static let closeCodes: Set<UInt16> = [1000, 1001, 1013, 4001, 4002, 4029]
    static let eventTypes: Set<String> = ["start", "update", "end", "lifecycle", "notification", "clear"]
    static let tags = ["washer", "ev", "dryer", "camera.front_door", "oven"]
    /// What a handshake may have chosen: lws binds only the names it serves, so nothing else reaches a session.
    static let subprotocols = ProtocolVersion.allCases.map(\.rawValue) + [PublisherStream.subprotocol]

    /// FUZZ_TRACE=1: every step and every frame is printed (to turn a finding into a regression test).
    static let trace = getenv("FUZZ_TRACE") != nil

    static func say(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    static func main() {
        runFuzzer { bytes in run(ByteReader(bytes)) }
    }

    static func run(_ input: ByteReader) {
        var input = input
        guard let gateway = try? TestGateway() else { return Fuzz.require(false, "the test gateway did not start") }
        var sessions: [TestSession] = []
        var checked: [ObjectIdentifier: Int] = [:]
        var lastSeq: [SeqStream: UInt64] = [:]
        var steps = 0
        gone.removeAll()
        accepted.removeAll()
        forged.removeAll()
        while !input.atEnd && steps < 64 {
            steps += 1
            step(&input, gateway, &sessions)
            for (i, s) in sessions.enumerated() {
                if trace {
                    for f in s.frames.dropFirst(checked[ObjectIdentifier(s)] ?? 0) { say("  s\(i) <- \(f.serialized())") }
                    if let code = s.closeCode, (checked[ObjectIdentifier(s)] ?? 0) < s.frames.count { say("  s\(i) closed \(code)") }
                }
                check(s, &checked, &lastSeq)
            }
        }
        converge(gateway, sessions)
    }

    /// Sessions the client side closed (the gateway no longer knows them).
    nonisolated(unsafe) static var gone = Set<ObjectIdentifier>()
    /// Per publisher session: the last `accepted` through.
    nonisolated(unsafe) static var accepted: [ObjectIdentifier: Double] = [:]
    /// Sessions that resumed from a point they never held.
    nonisolated(unsafe) static var forged = Set<ObjectIdentifier>()

    /// Sessions open at once, at most: every update is written, parsed back and checked for each of them, so 30
    /// sessions that each got every update made one input cost 76 ms; what a session can do wrong is its own (its
    /// window, acks, resume, choking), and both devices, observers and publishers fit in 8. Closed sessions do not
    /// count, so a program can still open many in turn (the per-address limit on failed authentications).
    static let maxLive = 8

    static func live(_ sessions: [TestSession]) -> Int {
        sessions.count(where: { $0.closeCode == nil && !gone.contains(ObjectIdentifier($0)) })
    }

    static func step(_ input: inout ByteReader, _ g: TestGateway, _ sessions: inout [TestSession]) {
        func session() -> TestSession? {
            guard !sessions.isEmpty else { return nil }
            let i = input.int(below: sessions.count)
            if trace { say("  (session s\(i))") }
            return sessions[i]
        }
        let op = input.int(below: 13)
        if trace { say("step \(["open", "connect", "raw", "frame", "ack", "push", "delete", "advance", "close", "reconnect", "choke", "drain", "completeCloses"][op])") }
        switch op {
        case 0:
            let peer = input.pick(["127.0.0.1", "192.168.1.9", "::1"]), subprotocol = input.pick(subprotocols)
            if live(sessions) < maxLive { sessions.append(g.open(peer: peer, subprotocol: subprotocol)) }
        case 1:
            let device = input.pick(["phone", "tablet"]), subprotocol = input.pick(subprotocols)
            if live(sessions) < maxLive { sessions.append(g.connect(device, subprotocol: subprotocol)) }
        case 2:
            session()?.send(text: String(decoding: input.chunk(), as: UTF8.self))
        case 3:
            if let s = session() {
                let f = frame(&input, s)
                if trace { say("  -> \(f.serialized())") }
                s.send(f)
            }
        case 4:
            session()?.ack()
        case 5:
            let body = update(&input)
            let answer = g.push(body)
            if trace { say("  \(body.serialized()) -> \(answer.status)") }
        case 6:
            let tag = input.pick(tags)
            g.request(.delete, "/v1/activities/\(tag)", query: input.pick([[], [("dismissal", "immediate")], [("dismissal", "60")]]))
        case 7:
            // Hours pass in at most 64 ticks: every deadline still fires, and one input stays well under a second.
            let seconds = Double(input.byte()) * input.pick([0.25, 1, 60])
            g.advance(by: seconds, tick: max(0.25, seconds / 64))
        case 8:
            if let s = session() {
                s.close()
                gone.insert(ObjectIdentifier(s))
            }
        case 9:
            if let s = session(), s.epoch != nil, s.deviceId != nil, s.closeCode == nil {
                sessions.append(g.reconnect(s))
                gone.insert(ObjectIdentifier(s))
            }
        case 10:
            if let s = session() { s.transport.chokeAfter = input.int(below: 4) }
        case 11:
            session()?.drain()
        default:
            g.completeCloses()
        }
    }

    /// A well-formed frame of every type the protocol knows, with values from the input.
    static func frame(_ input: inout ByteReader, _ s: TestSession) -> JSONValue {
        let type = input.pick(["auth", "auth", "subscribe", "ack", "register", "live_activity_token", "push_to_start_token",
                               "dismissed", "ping", "nonsense", "push"])
        var o: [String: JSONValue] = ["type": .string(type)]
        switch type {
        case "auth":
            o["token"] = .string(input.pick([TestGateway.token(for: "phone"), TestGateway.token(for: "tablet"),
                                             TestGateway.adminToken, TestGateway.viewerToken, "wrong-token-0123456789"]))
            let role = input.byte()
            if role & 1 == 1 { o["role"] = role & 2 == 2 ? "publisher" : "observer" }
            if input.byte() & 3 == 1 { o["device"] = .string(input.pick(["phone", "tablet", "nobody"])) }
            if input.byte() & 3 == 2 { o["version"] = input.pick(["lanpush.v2", "lanpush.v1", "lanpush.v9", "", 2, .null, ["v": 2]]) }
        case "subscribe":
            if input.byte() & 1 == 1 {
                s.read()
                let epoch = input.byte() & 1 == 1 ? (s.epoch ?? "e") : "other-epoch"
                let seq = number(&input, near: s.seq)
                o["epoch"] = .string(epoch)
                o["seq"] = seq
                // A resume from a point this session never held (it never synced, or claims a later seq than it
                // got): the gateway cannot tell and replays from there, so what the session then holds is not what
                // a fresh subscriber is shown. Such a session is left out of the convergence check only.
                let held = s.frames.contains { $0["type"] == "synced" }
                    && (seq.numberValue.map { $0 >= 0 && $0 == $0.rounded() && $0 <= Double(s.seq) } ?? false)
                if epoch == s.epoch && !held { forged.insert(ObjectIdentifier(s)) }
            }
        case "ack":
            o["seq"] = number(&input, near: s.seq)
        case "register":
            if input.byte() & 1 == 1 { o["push_token"] = .string(input.pick(["tok-1", "tok-2", ""])) }
            if input.byte() & 1 == 1 { o["push_url"] = input.pick(["http://relay.test/api/sendPushNotification", 5, .null]) }
            if input.byte() & 1 == 1 { o["supports_live_activities"] = input.pick([true, false, "yes", .null]) }
            if input.byte() & 1 == 1 { o["registration_info"] = ["app_id": "io.homeassistant.companion.android"] }
        case "live_activity_token":
            o["tag"] = .string(input.pick(tags))
            o["token"] = "la-token"
            if input.byte() & 1 == 1 { o["expires_at"] = number(&input, near: 1_800_000_000) }
        case "push_to_start_token":
            o["token"] = .string(input.pick(["pts-1", "pts-2"]))
        case "dismissed":
            o["tag"] = .string(input.pick(tags))
        case "push":
            // A publisher's item; to any other session a frame it does not know.
            o = update(&input).objectValue ?? [:]
            o["type"] = "push"
            if input.byte() & 1 == 1 { o["id"] = input.pick(["w-1", 7, 1.5, .null, ["x": 1], -9_007_199_254_740_993] as [JSONValue]) }
        default:
            break
        }
        return .object(o)
    }

    /// Numbers a client may send for a seq or a time: near the real one, or hostile.
    static func number(_ input: inout ByteReader, near base: UInt64) -> JSONValue {
        switch input.int(below: 6) {
        case 0: return .number(Double(base))
        case 1: return .number(Double(base) + Double(input.int(below: 8)) - 4)
        case 2: return input.pick([-1, 1e20, 9_007_199_254_740_993, 0.5, 1e300, -0.0])
        case 3: return .string("\(base)")
        case 4: return .null
        default: return .number(Double(input.uint16()))
        }
    }

    /// A `/v1/push` body: live updates (with lifecycle fields), ends, plain notifications and their clears.
    static func update(_ input: inout ByteReader) -> JSONValue {
        let targets: JSONValue = input.pick([["phone"], ["tablet"], "all"])
        let tag = JSONValue.string(input.pick(tags))
        var data: [String: JSONValue] = ["tag": tag]
        var message: JSONValue = .string("step \(input.byte())")
        switch input.int(below: 5) {
        case 0, 1:
            data["live_update"] = true
            data["progress"] = .number(Double(input.byte()))
            data["progress_max"] = 255
            if input.byte() & 3 == 0 { data["stale_date"] = .number(1_800_000_000 + Double(input.byte())) }
            if input.byte() & 3 == 0 { data["event"] = input.pick(["start", "update", "end"]) }
        case 2:
            message = "clear_notification"
            if input.byte() & 1 == 1 { data["dismissal_date"] = .number(1_800_000_000 + Double(input.uint16())) }
        case 3:
            data["lanpush"] = ["path": .string(input.pick(["lan", "relay", "both"]))]
        default:
            data.removeValue(forKey: "tag")
        }
        return ["targets": targets, "title": "Fuzz", "message": message, "data": .object(data)]
    }

    /// Seqs count per device: an observer's session carries several devices' events, each in its own order.
    struct SeqStream: Hashable {
        let session: ObjectIdentifier
        let device: String
    }

    static func check(_ s: TestSession, _ checked: inout [ObjectIdentifier: Int], _ lastSeq: inout [SeqStream: UInt64]) {
        let key = ObjectIdentifier(s)
        let frames = s.frames
        for f in frames.dropFirst(checked[key] ?? 0) {
            guard let type = f["type"]?.stringValue else { return Fuzz.require(false, "a frame without type: \(f.serialized())") }
            if type == "accepted" || type == "rejected" {
                let last = accepted[key] ?? 0
                if let through = f["through"]?.numberValue {
                    Fuzz.require(through > last, "accepted through \(through) after \(last)")
                    accepted[key] = through
                }
                if let item = f["item"]?.numberValue {
                    Fuzz.require(item > last, "item \(item) rejected after accepted through \(last)")
                }
            }
            guard eventTypes.contains(type), let seq = f["seq"]?.numberValue else { continue }
            let stream = SeqStream(session: key, device: f["device_id"]?.stringValue ?? "")
            let previous = lastSeq[stream] ?? 0
            Fuzz.require(UInt64(seq) > previous || (previous == 0 && seq == 0), "seq \(seq) after \(previous): \(frames.map { $0.serialized() })")
            lastSeq[stream] = UInt64(seq)
        }
        checked[key] = frames.count
        if let code = s.closeCode { Fuzz.require(closeCodes.contains(code), "closed with \(code)") }
    }

    /// A device session still open reads and acks until nothing more comes; it then holds what a new session of
    /// the same device holds once it has read and acked everything too (its snapshot comes after the queued
    /// notifications it may not have, so a full window of them holds the snapshot back until they are acked).
    static func converge(_ g: TestGateway, _ sessions: [TestSession]) {
        g.completeCloses()
        for s in sessions where s.closeCode == nil && !gone.contains(ObjectIdentifier(s)) && !forged.contains(ObjectIdentifier(s)) && s.deviceId != nil && s.frames.contains(where: { $0["type"] == "synced" || $0["type"] == "snapshot" }) {
            guard s.transport.closed == nil else { continue }
            settle(s)
            guard s.transport.closed == nil, let device = s.deviceId else { continue }
            let fresh = g.connect(device)
            settle(fresh)
            if fresh.closeCode == nil && fresh.transport.closed == nil {
                Fuzz.require(fresh.frames.contains { $0["type"] == "synced" }, "\(device): a new session never got to synced")
                Fuzz.require(picture(s) == picture(fresh),
                    "\(device): the session holds \(picture(s)) but a new one is shown \(picture(fresh))")
            }
            fresh.close()
        }
    }

    /// Reads and acks until the gateway sends nothing more (or the session is closed).
    static func settle(_ s: TestSession) {
        s.drain()
        for _ in 0..<64 {
            let before = s.frames.count
            s.ack()
            if s.frames.count == before || s.transport.closed != nil { break }
        }
        s.read()
    }

    static func picture(_ s: TestSession) -> [String: String] {
        s.activities.mapValues { entry in
            (entry["state"] ?? .null).serialized() + "|" + (entry["phase"]?.stringValue ?? "?")
        }
    }
}
