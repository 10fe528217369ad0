import FuzzSupport
import LanpushCore
import LanpushGateway
import LanpushLWS
import LanpushTesting

/// HTTP requests through the real Router of an in-process gateway (`TestGateway`): the pairing redeem body
/// (`POST /v1/pair`, with the real pairing's code spelled the ways people type it, or anything), HA's relay body on
/// both relay paths, `/v1/push`, device management and activity paths with any path segment, method, content type
/// and token. Every answer is below 500, and every refusal is JSON naming message, field and rule. A code redeems
/// once.
@main
struct FuzzRouter {
    static let tokens: [String?] = [TestGateway.adminToken, TestGateway.viewerToken, nil, "wrong-token-0123456789"]

    static func main() {
        runFuzzer { bytes in run(ByteReader(bytes)) }
    }

    static func run(_ input: ByteReader) {
        var input = input
        guard let g = try? TestGateway() else { return Fuzz.require(false, "the test gateway did not start") }
        let pairing = g.request(.post, "/v1/pairings", json: ["device": "kitchen"]).json
        guard let code = pairing["code"]?.stringValue, let short = pairing["short_code"]?.stringValue else {
            return Fuzz.require(false, "no pairing: \(pairing.serialized())")
        }
        var redeemed = false
        var requests = 0
        while !input.atEnd && requests < 16 {
            requests += 1
            let (method, path, token, contentType, body) = request(&input, code: code, short: short)
            let answer = g.request(method, path, raw: body, token: token, headers: contentType.map { ["Content-Type": $0] } ?? [:])
            let context = "\(method.rawValue) \(path) \(String(decoding: body, as: UTF8.self).debugDescription)"
            Fuzz.requireErrorShape(answer.status, answer.body, context)
            if (200..<300).contains(answer.status), answer.contentType.hasPrefix("application/json") {
                Fuzz.require((try? JSONValue.parse(answer.body)) != nil, "a 2xx that is not JSON: \(context)")
            }
            if method == .post, path == "/v1/pair", answer.status == 200 {
                Fuzz.require(!redeemed, "a pairing code redeemed twice: \(context)")
                Fuzz.require(answer.json["device_id"] == "kitchen" && answer.json["token"]?.stringValue != nil, "redeemed: \(answer.text)")
                redeemed = true
            }
        }
    }

    static func request(_ input: inout ByteReader, code: String, short: String)
        -> (HTTPMethod, String, String?, String?, [UInt8])
    {
        let contentType = input.pick(["application/json", "application/json; charset=utf-8", "application/merge-patch+json",
                                      "text/plain", nil])
        switch input.int(below: 8) {
        case 0, 1:
            // Redeem: the real code as typed (any case, grouped, I/L/O confusables), or a fuzzed body.
            var spelled = input.byte() & 1 == 1 ? code : short
            switch input.int(below: 5) {
            case 0: spelled = spelled.lowercased()
            case 1: spelled = String(spelled.prefix(4)) + "-" + String(spelled.dropFirst(4))
            case 2: spelled = String(spelled.map { $0 == "1" ? "l" : $0 == "0" ? "O" : $0 })
            case 3: spelled = " " + spelled + " "
            default: break
            }
            let body: [UInt8] = input.byte() & 1 == 1
                ? JSONValue.object(["code": .string(spelled)]).serializedBytes() : input.rest()
            return (.post, "/v1/pair", nil, contentType ?? "application/json", body)
        case 2:
            return (.post, input.pick(["/api/sendPushNotification", "/api/sendPush/android/v1"]), nil, contentType, input.rest())
        case 3:
            return (.post, "/v1/push", input.pick(tokens), contentType, input.rest())
        case 4:
            return (input.pick([.post, .patch]), input.pick(["/v1/devices", "/v1/devices/phone", "/v1/devices/kitchen", "/v1/pairings"]),
                    input.pick(tokens), contentType, input.rest())
        default:
            // Any method on any path: segments from the input (percent-decoded by lws before it gets here: any bytes).
            let segment = String(decoding: input.chunk(max: 80), as: UTF8.self)
            let path = input.pick(["/v1/activities/", "/v1/devices/", "/v1/devices/phone/", "/", "/v1/", "/preview/", ""])
                + segment + input.pick(["", "/token", "/"])
            return (input.pick(HTTPMethod.allCases), path.hasPrefix("/") ? path : "/" + path, input.pick(tokens), contentType, input.rest())
        }
    }
}
