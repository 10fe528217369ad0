import LanpushCore

#if canImport(Glibc)
import Glibc
#endif

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// libFuzzer calls back through a C function pointer, which cannot capture: the target's body waits here.
nonisolated(unsafe) private var body: (([UInt8]) -> Void)?

/// Hands control to libFuzzer (its flags and corpus folders are the process's arguments); `test` runs once per
/// input and reports a broken invariant with `Fuzz.require`, which traps (libFuzzer's "deadly signal").
public func runFuzzer(_ test: @escaping ([UInt8]) -> Void) -> Never {
    body = test
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    let rc = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        body?(bytes)
        return 0
    }
    exit(rc)
}

public enum Fuzz {
    /// A broken invariant: the input that led here is a finding.
    public static func require(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) {
        if !condition() { fatalError("invariant: \(message())", file: file, line: line) }
    }

    /// A refused request or frame is answered the way docs/PROTOCOL.md promises: 4xx JSON naming message, field
    /// and rule (the field may be empty for the body as a whole).
    public static func requireErrorShape(_ status: Int, _ body: [UInt8], _ context: @autoclosure () -> String) {
        require(status < 500, "\(status) for \(context()): \(String(decoding: body, as: UTF8.self))")
        guard status >= 400 else { return }
        guard let o = (try? JSONValue.parse(body))?.objectValue else {
            return require(false, "\(status) without a JSON object for \(context()): \(String(decoding: body, as: UTF8.self))")
        }
        require(o["message"]?.stringValue?.isEmpty == false && o["field"]?.stringValue != nil && o["rule"]?.stringValue?.isEmpty == false,
            "\(status) body lacks message/field/rule for \(context()): \(String(decoding: body, as: UTF8.self))")
    }
}

/// Reads structured choices off the fuzzer's bytes (what is left over when they run out is zero).
public struct ByteReader {
    private let bytes: [UInt8]
    private var index = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var atEnd: Bool { index >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    public mutating func int(below n: Int) -> Int { n <= 1 ? 0 : Int(byte()) % n }

    public mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Up to `max` bytes, the length taken from the input first.
    public mutating func chunk(max: Int = 255) -> [UInt8] {
        let n = min(Int(byte()), max, bytes.count - index)
        guard n > 0 else { return [] }
        defer { index += n }
        return Array(bytes[index..<(index + n)])
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        guard index < bytes.count else { return [] }
        defer { index = bytes.count }
        return Array(bytes[index...])
    }

    /// One of `options`.
    public mutating func pick<T>(_ options: [T]) -> T { options[int(below: options.count)] }
}
