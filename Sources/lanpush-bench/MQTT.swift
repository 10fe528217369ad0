/// A minimal MQTT 3.1.1 codec: what the benchmark's subscribers and publisher need (CONNECT, SUBSCRIBE,
/// PUBLISH QoS 0 and 1, PUBACK, PINGREQ; CONNACK, SUBACK, PUBLISH, PUBACK, PINGRESP in).
enum MQTT {
    static let connack: UInt8 = 2
    static let publish: UInt8 = 3
    static let suback: UInt8 = 9
    static let pingresp: UInt8 = 13

    static func remainingLength(_ n: Int, into out: inout [UInt8]) {
        var x = n
        repeat {
            var b = UInt8(x % 128)
            x /= 128
            if x > 0 { b |= 0x80 }
            out.append(b)
        } while x > 0
    }

    static func string(_ s: String, into out: inout [UInt8]) {
        let u = Array(s.utf8)
        out.append(UInt8(u.count >> 8))
        out.append(UInt8(u.count & 0xFF))
        out.append(contentsOf: u)
    }

    static func connect(clientId: String, keepAlive: UInt16) -> [UInt8] {
        var body: [UInt8] = []
        string("MQTT", into: &body)
        body.append(4)  // protocol level 3.1.1
        body.append(0x02)  // clean session
        body.append(UInt8(keepAlive >> 8))
        body.append(UInt8(keepAlive & 0xFF))
        string(clientId, into: &body)
        var out: [UInt8] = [0x10]
        remainingLength(body.count, into: &out)
        return out + body
    }

    static func subscribe(packetId: UInt16, filters: [String], qos: UInt8 = 0) -> [UInt8] {
        var body: [UInt8] = [UInt8(packetId >> 8), UInt8(packetId & 0xFF)]
        for f in filters {
            string(f, into: &body)
            body.append(qos)
        }
        var out: [UInt8] = [0x82]
        remainingLength(body.count, into: &out)
        return out + body
    }

    /// PUBLISH QoS 0 (or 1, with `packetId`), optionally retained.
    static func publish(
        topic: [UInt8], payload: UnsafeRawBufferPointer, retain: Bool, qos: UInt8 = 0, packetId: UInt16 = 0,
        into out: inout [UInt8]
    ) {
        out.append(0x30 | (qos << 1) | (retain ? 1 : 0))
        remainingLength(2 + topic.count + (qos > 0 ? 2 : 0) + payload.count, into: &out)
        out.append(UInt8(topic.count >> 8))
        out.append(UInt8(topic.count & 0xFF))
        out.append(contentsOf: topic)
        if qos > 0 {
            out.append(UInt8(packetId >> 8))
            out.append(UInt8(packetId & 0xFF))
        }
        out.append(contentsOf: payload)
    }

    static let puback: UInt8 = 4

    /// PUBACK for a QoS 1 PUBLISH.
    static func puback(_ packetId: UInt16) -> [UInt8] {
        [0x40, 0x02, UInt8(packetId >> 8), UInt8(packetId & 0xFF)]
    }

    static let pingreq: [UInt8] = [0xC0, 0x00]

    /// Splits a byte stream into packets. `feed` returns each complete packet's type, flags and the body range.
    struct Decoder {
        var buffer: [UInt8] = []

        /// Calls `packet(type, flags, body)` for every complete packet in `buffer` + `bytes`.
        mutating func feed(_ bytes: UnsafeRawBufferPointer, _ packet: (UInt8, UInt8, UnsafeRawBufferPointer) -> Void) {
            if buffer.isEmpty {
                let used = Self.parse(bytes, packet)
                if used < bytes.count { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used...])) }
                return
            }
            buffer.append(contentsOf: bytes)
            let used = buffer.withUnsafeBytes { Self.parse($0, packet) }
            buffer.removeFirst(used)
        }

        /// Returns the bytes consumed (whole packets only).
        private static func parse(_ b: UnsafeRawBufferPointer, _ packet: (UInt8, UInt8, UnsafeRawBufferPointer) -> Void) -> Int {
            var i = 0
            while i + 2 <= b.count {
                var len = 0
                var mult = 1
                var k = i + 1
                var complete = false
                while k < b.count && k < i + 5 {
                    let byte = b[k]
                    len += Int(byte & 0x7F) * mult
                    mult *= 128
                    k += 1
                    if byte & 0x80 == 0 {
                        complete = true
                        break
                    }
                }
                guard complete, k + len <= b.count else { break }
                packet(b[i] >> 4, b[i] & 0x0F, UnsafeRawBufferPointer(rebasing: b[k..<(k + len)]))
                i = k + len
            }
            return i
        }
    }

    /// The topic, packet id (QoS > 0: from the fixed header's `flags`) and payload of a PUBLISH body.
    static func publishParts(_ body: UnsafeRawBufferPointer, flags: UInt8 = 0)
        -> (topic: UnsafeRawBufferPointer, packetId: UInt16?, payload: UnsafeRawBufferPointer)?
    {
        guard body.count >= 2 else { return nil }
        let tl = Int(body[0]) << 8 | Int(body[1])
        let qos = (flags >> 1) & 3
        let idBytes = qos > 0 ? 2 : 0
        guard 2 + tl + idBytes <= body.count else { return nil }
        let id = qos > 0 ? UInt16(body[2 + tl]) << 8 | UInt16(body[3 + tl]) : nil
        return (UnsafeRawBufferPointer(rebasing: body[2..<(2 + tl)]), id, UnsafeRawBufferPointer(rebasing: body[(2 + tl + idBytes)...]))
    }

    /// Bytes of the fixed header for a packet body of `n` bytes.
    static func headerSize(_ n: Int) -> Int {
        n < 128 ? 2 : n < 16384 ? 3 : n < 2_097_152 ? 4 : 5
    }
}

/// Bytes of a WebSocket frame header for a payload of `n` bytes (+4 when masked, client → server).
@inline(__always)
func wsHeaderBytes(_ n: Int, masked: Bool) -> Int {
    (n < 126 ? 2 : n < 65536 ? 4 : 10) + (masked ? 4 : 0)
}
