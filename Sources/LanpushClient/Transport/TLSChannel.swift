#if !canImport(Darwin)
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// TLS for the NIO transport: the system's trust store, or a pinned certificate checked in NIOSSL's verification
/// callback — the one place the peer's certificate is seen before any byte of the session is sent.
enum TLSChannel {
    static func context(for policy: TLSPolicy) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch policy {
        case .system:
            break
        case .pinned:
            // The callback below decides; the name is not checked (a LAN gateway is reached by its address).
            configuration.certificateVerification = .noHostnameVerification
        case .insecure:
            configuration.certificateVerification = .none
        }
        return try NIOSSLContext(configuration: configuration)
    }

    static func addHandler(to channel: any Channel, context: NIOSSLContext, host: String, tls: TLSPolicy) throws {
        // SNI carries names only, never an address.
        let serverName = IPAddressText.isAddress(host) ? nil : host
        let handler: NIOSSLClientHandler
        if case .pinned(let expected) = tls {
            handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) { chain, promise in
                guard let leaf = chain.first, let der = try? leaf.toDERBytes() else {
                    promise.succeed(.failed)
                    return
                }
                promise.succeed(CertificatePin.matches(der: der, sha256: expected) ? .certificateVerified : .failed)
            }
        } else {
            handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
        }
        try channel.pipeline.syncOperations.addHandler(handler, position: .first)
    }

    /// A readable one-liner for a connection failure (NIOSSL's errors print as type names).
    static func describe(_ error: any Error) -> String {
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .handshakeFailed:
                return "TLS handshake failed (the certificate does not match the pinned fingerprint, or is not trusted)"
            default:
                return "TLS: \(ssl)"
            }
        }
        if let ssl = error as? BoringSSLError { return "TLS handshake failed: \(ssl)" }
        // NIO's connect error prints every field of every attempt; the first attempt's reason is the news
        // (an IOError reads "connect(...): Connection refused (errno: 111)").
        if let connect = error as? NIOConnectionError {
            if let first = connect.connectionErrors.first { return describe(first.error) }
            return "cannot resolve \(connect.host)"
        }
        if case ChannelError.connectTimeout = error { return "no connection within the timeout" }
        return "\(error)"
    }
}

/// Whether a host string is an IPv4 or IPv6 literal.
enum IPAddressText {
    static func isAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
#endif
