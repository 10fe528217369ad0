/// The timestamps Aivi's `time_since` / `time_until` formatters read: `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`,
/// what Python's `isoformat()` (and so HA's templates) produce. A zone is required: without one the
/// device would guess, and a countdown would be off by the UTC offset.
public enum ISO8601Timestamp {
    /// Unix seconds of `text`, or nil when it is not such a timestamp (including impossible dates).
    public static func unixSeconds(_ text: String) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"),
            let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take("T"),
            let hour = scanner.digits(2), scanner.take(":"),
            let minute = scanner.digits(2), scanner.take(":"),
            let second = scanner.digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }

        var fraction = 0.0
        if scanner.take(".") {
            var scale = 0.1
            var count = 0
            while let d = scanner.digit() {
                fraction += Double(d) * scale
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
        }

        let offset: Int
        if scanner.take("Z") {
            offset = 0
        } else if let sign = scanner.sign(), let oh = scanner.digits(2), scanner.take(":"), let om = scanner.digits(2),
            oh < 24, om < 60
        {
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        return Double(local - offset) + fraction
    }

    public static func isValid(_ text: String) -> Bool { unixSeconds(text) != nil }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func take(_ ascii: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: ascii) else { return false }
            position += 1
            return true
        }

        mutating func digit() -> Int? {
            guard position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 else { return nil }
            position += 1
            return Int(bytes[position - 1] - 0x30)
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let d = digit() else { return nil }
                value = value * 10 + d
            }
            return value
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}
