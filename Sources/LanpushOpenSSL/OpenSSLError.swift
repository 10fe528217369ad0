/// A call into libcrypto that failed: the step that failed and OpenSSL's reason for it.
public struct OpenSSLError: Error, CustomStringConvertible, Sendable {
    public let description: String

    /// Runs `call` with a buffer for the C shim's reason; throws it when `call` returns non-zero.
    static func check(_ call: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(OpenSSLError) {
        var reason = [CChar](repeating: 0, count: 256)
        let failed = reason.withUnsafeMutableBufferPointer { call($0.baseAddress!, $0.count) } != 0
        if failed {
            throw OpenSSLError(description: String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}
