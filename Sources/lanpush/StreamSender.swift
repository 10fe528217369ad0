import Foundation
import LanpushClient
import LanpushCore

/// `lanpush send --stream`: a file of push bodies, one JSON object per line, sent through the publisher stream
/// (docs/PROTOCOL.md, "Publisher stream") — pipelined up to the gateway's window instead of one request each, and
/// done only once the gateway's cumulative `accepted` covers every line (with the store on: committed).
struct StreamSender {
    /// One line of the file: its line number (1-based, for messages) and the body.
    struct Line {
        var number: Int
        var body: [String: JSONValue]
    }

    struct Summary {
        var sent = 0
        var rejected = 0
        var warnings = 0
    }

    let url: URL
    let token: String
    let tls: TLSPolicy
    /// Print every answer frame as the gateway sent it (stdout) instead of one line per rejection and warning.
    let json: Bool

    /// Reads the lines: blank lines are skipped; anything that is not a JSON object stops here, before anything is
    /// sent (a file half sent because of a typo on line 900 is worse than none).
    static func read(_ text: String, name: String) throws -> [Line] {
        var lines: [Line] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            let value: JSONValue
            do {
                value = try JSONValue.parse(Array(trimmed.utf8))
            } catch {
                throw CLIError("\(name):\(i + 1): \(error)")
            }
            guard case .object(let body) = value else { throw CLIError("\(name):\(i + 1): each line must be a JSON object") }
            lines.append(Line(number: i + 1, body: body))
        }
        return lines
    }

    func run(_ lines: [Line]) async throws -> Summary {
        // A publisher's frames are the same in every version; its own subprotocol has the gateway read it in large
        // pieces (a gateway without it chooses v1).
        let connection = try await PlatformTransport().connect(
            to: url, subprotocols: [PublisherStream.subprotocol, ProtocolVersion.v1.rawValue], tls: tls)
        let inbox = connection.inbox
        func next() async throws -> [String: JSONValue] {
            switch await inbox.next() {
            case .text(let text):
                guard case .object(let o)? = try? JSONValue.parse(Array(text.utf8)) else { return [:] }
                if json { Output.line(text) }
                return o
            case .closed(let code, let reason):
                throw CLIError("the gateway closed the stream (\(code.map(String.init) ?? "no code")\(reason.isEmpty ? "" : ": \(reason)"))")
            case .interrupted:
                throw CLIError("interrupted")
            }
        }
        _ = try await next()  // auth_required
        try await connection.send(JSONValue.object(["type": "auth", "token": .string(token), "role": "publisher"]).serialized())
        let auth = try await next()
        guard auth["type"] == "auth_ok" else {
            await connection.close(code: 1000, reason: "")
            throw CLIError("the gateway refused the publisher: \(auth["message"]?.stringValue ?? "auth failed")")
        }
        let window = max(1, Int(auth["window"]?.numberValue ?? 1))

        var summary = Summary()
        var accepted = 0
        // The item number of a frame is its place in what was sent: item i is lines[i - 1].
        func line(_ frame: [String: JSONValue]) -> Int {
            let item = Int(frame["item"]?.numberValue ?? 0)
            return (1...lines.count).contains(item) ? lines[item - 1].number : 0
        }
        while accepted < lines.count {
            while summary.sent < lines.count && summary.sent - accepted < window {
                var body = lines[summary.sent].body
                body["type"] = "push"
                try await connection.send(JSONValue.object(body).serialized())
                summary.sent += 1
            }
            let frame = try await next()
            switch frame["type"]?.stringValue {
            case "accepted":
                accepted = max(accepted, Int(frame["through"]?.numberValue ?? 0))
            case "rejected":
                summary.rejected += 1
                if !json {
                    Output.note("line \(line(frame)): rejected: \(frame["message"]?.stringValue ?? "") (\(frame["field"]?.stringValue ?? "")/\(frame["rule"]?.stringValue ?? ""))")
                }
            case "warning":
                summary.warnings += 1
                if !json { Output.note("line \(line(frame)): warning: \(frame["message"]?.stringValue ?? "")") }
            case "error":
                let through = Int(frame["through"]?.numberValue ?? 0)
                let resume = through < lines.count ? " from line \(lines[through].number)" : ""
                throw CLIError("\(frame["message"]?.stringValue ?? "the gateway failed"): send again\(resume)")
            default:
                break
            }
        }
        await connection.close(code: 1000, reason: "done")
        return summary
    }
}
