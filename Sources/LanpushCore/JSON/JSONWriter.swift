/// Compact, deterministic JSON output (sorted keys, shortest round-trip numbers).
///
/// On the hot path (every frame and every HTTP answer): members are sorted once as (key, value) pairs — no
/// second hash lookup per key —, strings without characters to escape are copied in one piece, and integral
/// numbers are written digit by digit without an intermediate `String`.
public enum JSONWriter {
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): writeNumber(n, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            writeObject(object, into: &out, marking: nil)
        }
    }

    /// Writes `value`, and when it is an object with member `key`, returns where that member's value is in `out`.
    static func write(_ value: JSONValue, into out: inout [UInt8], marking key: String) -> Range<Int>? {
        guard case .object(let object) = value else {
            write(value, into: &out)
            return nil
        }
        return writeObject(object, into: &out, marking: key)
    }

    @discardableResult
    private static func writeObject(_ object: [String: JSONValue], into out: inout [UInt8], marking key: String?) -> Range<Int>? {
        var range: Range<Int>?
        out.append(UInt8(ascii: "{"))
        if object.count == 1, key == nil {
            let (name, member) = object.first!
            writeString(name, into: &out)
            out.append(UInt8(ascii: ":"))
            write(member, into: &out)
        } else if object.count <= smallObject {
            // Most objects written are small (a frame, an answer's per-target result): their members are put in
            // order as positions in a buffer on the stack — no array of copied (key, value) pairs to allocate,
            // retain, sort and free for each.
            withUnsafeTemporaryAllocation(of: [String: JSONValue].Index.self, capacity: object.count) { order in
                let count = order.initialize(fromContentsOf: object.indices)
                defer { order.deinitialize() }
                for next in order.indices.dropFirst() {  // insertion sort: a handful of members
                    var slot = next
                    while slot > 0, object[order[slot]].key < object[order[slot - 1]].key {
                        order.swapAt(slot, slot - 1)
                        slot -= 1
                    }
                }
                for position in 0..<count {
                    let (name, member) = object[order[position]]
                    let at = writeMember(name, member, first: position == 0, into: &out)
                    if name == key { range = at }
                }
            }
        } else if !object.isEmpty {
            var first = true
            for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                let at = writeMember(name, member, first: first, into: &out)
                if name == key { range = at }
                first = false
            }
        }
        out.append(UInt8(ascii: "}"))
        return range
    }

    /// Objects up to this many members are ordered on the stack.
    static let smallObject = 16

    /// `"name":value`, after a comma unless it is the first member; returns where the value is.
    @inline(__always)
    private static func writeMember(_ name: String, _ member: JSONValue, first: Bool, into out: inout [UInt8]) -> Range<Int> {
        if !first { out.append(UInt8(ascii: ",")) }
        writeString(name, into: &out)
        out.append(UInt8(ascii: ":"))
        let start = out.count
        write(member, into: &out)
        return start..<out.count
    }

    /// How many bytes ``write(_:into:)`` would produce, without producing them: no output buffer, no sorting of
    /// keys. What the gateway weighs its memory bounds in (a frame's bytes) costs a walk, not an encoding.
    static func count(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .number(let n): return countNumber(n)
        case .string(let s): return countString(s)
        case .array(let items):
            var n = 2 + max(0, items.count - 1)
            for item in items { n += count(item) }
            return n
        case .object(let object):
            var n = 2 + max(0, object.count - 1) + object.count  // braces, commas, colons
            for (key, member) in object { n += countString(key) + count(member) }
            return n
        }
    }

    static func countNumber(_ n: Double) -> Int {
        guard n.isFinite else { return 4 }
        guard n == n.rounded(), abs(n) < 9_007_199_254_740_992 else { return String(n).utf8.count }
        var x = Int64(n).magnitude
        var digits = 1
        while x >= 10 {
            x /= 10
            digits += 1
        }
        return digits + (n < 0 ? 1 : 0)
    }

    static func countString(_ s: String) -> Int {
        var n = 2
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: n += 2
            case 0..<0x20: n += 6
            default: n += 1
            }
        }
        return n
    }

    static func writeNumber(_ n: Double, into out: inout [UInt8]) {
        guard n.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if n == n.rounded(), abs(n) < 9_007_199_254_740_992 {
            writeInteger(Int64(n), into: &out)
        } else {
            out.append(contentsOf: String(n).utf8)
        }
    }

    /// Decimal digits of `v` (the same text as `String(v)`).
    static func writeInteger(_ v: Int64, into out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var x = v.magnitude
        if x < 10 {
            out.append(UInt8(ascii: "0") &+ UInt8(x))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of a UInt64
        let n = withUnsafeMutableBytes(of: &digits) { buf -> Int in
            var i = buf.count
            while x > 0 {
                i -= 1
                buf[i] = UInt8(ascii: "0") &+ UInt8(x % 10)
                x /= 10
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[i...]))
            return buf.count - i
        }
        _ = n
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Native strings hand out their UTF-8 without a copy; bridged or foreign ones go byte by byte.
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { utf8 in appendEscaped(utf8, into: &out) }
        if done == nil {
            for byte in s.utf8 { appendEscaped(byte, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Copies runs that need no escaping in one piece.
    @inline(__always)
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var runStart = 0
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            appendEscaped(byte, into: &out)
            i += 1
            runStart = i
        }
        if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
    }

    @inline(__always)
    private static func appendEscaped(_ byte: UInt8, into out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0..<0x20:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        default:
            out.append(byte)
        }
    }
}
