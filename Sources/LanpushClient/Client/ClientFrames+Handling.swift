import Foundation
import LanpushCore

extension LanpushClient {
    /// One received text: control frames drive the session, event frames go through the reducer to the app.
    func received(_ text: String, on s: Session) async {
        guard let frame = ServerFrame(text: text) else {
            await emit(.error("ignored a message that is not a JSON object with a type"))
            return
        }
        if frame.isEvent {
            await handleEvent(frame, text: text, on: s)
        } else {
            await handleControl(frame, on: s)
            if configuration.reportsFrames { await emit(.frame(frame, text: text)) }
        }
    }

    private func handleControl(_ frame: ServerFrame, on s: Session) async {
        switch frame.type {
        case "auth_required":
            var device: String?
            if case .observer(let d) = configuration.role { device = d }
            await send(
                ClientFrame.auth(
                    token: configuration.token, observer: configuration.isObserver, device: device,
                    keepalive: configuration.keepalive),
                on: s)
        case "auth_ok":
            await authenticated(frame, on: s)
        case "auth_invalid":
            s.info.authInvalid = frame["message"]?.stringValue ?? "auth invalid"
        case "registered":
            await emit(.registered(
                pushToken: frame["push_token"]?.stringValue,
                supportsLiveActivities: frame["supports_live_activities"]?.boolValue))
        case "error":
            let message = frame["message"]?.stringValue ?? "error"
            s.info.lastError = message
            await emit(.error(message))
        case "device":
            await emit(.device(frame.object))
        default:
            break  // pong, and whatever a newer gateway adds
        }
    }

    private func authenticated(_ frame: ServerFrame, on s: Session) async {
        s.authed = true
        if let id = frame.deviceId { deviceId = id }
        keepalive = frame["keepalive"]?.numberValue.flatMap { $0 > 0 && $0 <= 86_400 ? Int($0) : nil }
        let observer = configuration.isObserver || frame["role"]?.stringValue == "observer"
        if !configuration.isObserver, let registration = configuration.registration {
            await send(ClientFrame.register(registration), on: s)
        }
        let resume = configuration.isObserver || wantSnapshot ? nil : state
        wantSnapshot = false
        await send(ClientFrame.subscribe(resumeFrom: resume), on: s)
        for (_, pending) in outgoing { await send(pending, on: s) }
        outgoing.removeAll()
        await emit(.connected(SessionInfo(
            deviceId: observer ? nil : frame.deviceId, observer: observer, epoch: frame["epoch"]?.stringValue,
            seq: frame.seq)))
    }

    /// Applies an event frame and counts it for the next ack once the app handled all it caused.
    private func handleEvent(_ frame: ServerFrame, text: String, on s: Session) async {
        if s.discard { return }
        let observer = configuration.isObserver
        let device = observer ? frame.deviceId ?? "" : deviceId ?? ""
        let before = observer ? devices[device] ?? .empty : state
        let result = reducer.reduce(before, frame, now: configuration.clock())
        if let resync = result.resync {
            // The stream no longer matches what this client holds: start over from a snapshot (rule 8).
            wantSnapshot = true
            s.discard = true
            await emit(.error("resynchronizing: \(resync)"))
            await s.connection.close(code: 1000, reason: "resync")
            return
        }
        if observer { devices[device] = result.state } else { state = result.state }
        var events = result.changes.map { ClientEvent.state($0, device: device) }
        if configuration.reportsFrames { events.append(.frame(frame, text: text)) }
        for event in events {
            guard await emit(event) else {
                // Stopped before the app saw it: as if it never arrived (it is not acknowledged, so it comes again).
                if observer { devices[device] = before } else { state = before }
                return
            }
        }
        if frame.type == "synced" {
            backoff.reset()
            await setStatus(.live)
        }
        if !observer, let ack = result.ack {
            s.ackable = max(s.ackable, ack)
            s.pendingAcks += 1
        }
    }
}
