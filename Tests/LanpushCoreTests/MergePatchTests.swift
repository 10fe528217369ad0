import PropertyBased
import Testing

@testable import LanpushCore

/// RFC 7386 section 3 examples, then the round-trip property the delivery path relies on.
@Suite struct MergePatchTests {
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"a":1,"e":null}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfc7386Examples(original: String, patch: String, result: String) throws {
        let applied = MergePatch.apply(try JSONValue.parse(patch), to: try JSONValue.parse(original))
        #expect(applied == (try JSONValue.parse(result)))
    }

    @Test func diffCarriesOnlyChangesAndNullsForRemovals() throws {
        let a: [String: JSONValue] = ["message": "Rinsing", "progress": 900, "progress_max": 3600, "icon": "mdi:washing-machine"]
        let b: [String: JSONValue] = ["message": "Spinning", "progress": 900, "progress_max": 3600]
        #expect(MergePatch.diff(from: a, to: b) == ["message": "Spinning", "icon": .null])
        #expect(MergePatch.diff(from: a, to: a).isEmpty)
    }

    /// Random flat-and-nested states like ContentState with a template: diff then apply gives the target.
    @Test func diffThenApplyGivesTheTarget() async {
        await propertyCheck(count: 400, input: Self.stateGen, Self.stateGen) { from, to in
            let patch = MergePatch.diff(from: from, to: to)
            #expect(MergePatch.apply(patch, to: from) == to)
        }
    }

    static let keys = ["message", "progress", "color", "icon", "url", "template"]
    static let stateGen = Gen.int(in: 0...63).array(of: 6).map { picks -> [String: JSONValue] in
        var state = [String: JSONValue]()
        for (i, key) in keys.enumerated() {
            let pick = picks[i]
            if pick % 4 == 0 { continue }
            if key == "template" {
                var inner = [String: JSONValue]()
                if pick & 4 != 0 { inner["style"] = .string(pick & 8 != 0 ? "simple" : "segmented") }
                if pick & 16 != 0 { inner["value"] = .number(Double(pick % 5) / 4) }
                if pick & 32 != 0 { inner["label"] = ["a": .number(Double(pick % 3))] }
                state[key] = .object(inner)
            } else {
                state[key] = pick & 8 != 0 ? .number(Double(pick)) : .string("v\(pick % 5)")
            }
        }
        return state
    }
}
