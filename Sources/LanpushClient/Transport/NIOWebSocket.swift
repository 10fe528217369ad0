#if !canImport(Darwin)
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The WebSocket client on Linux: NIO's HTTP/1.1 upgrade and frame codec, TLS through `TLSChannel`. It answers pings,
/// reassembles fragmented messages, masks what it sends (RFC 6455 section 5.3) and reports the close code and reason.
enum NIOWebSocketClient {
    /// Largest message accepted: a snapshot of many activities with templates is the biggest frame the gateway sends.
    static let maxMessageBytes = 16 << 20

    enum Upgrade: Sendable {
        case upgraded
        case refused
    }

    static func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> NIOWebSocketConnection {
        let target = try Endpoint(url: url, secureSchemes: ["wss", "https"])
        let inbox = TransportInbox()
        let sslContext = try target.secure ? TLSChannel.context(for: tls) : nil
        let (channel, upgrade): (any Channel, EventLoopFuture<Upgrade>) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: target.host, port: target.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext { try TLSChannel.addHandler(to: channel, context: sslContext, host: target.host, tls: tls) }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxMessageBytes) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers(
                                NIOWebSocketFrameAggregator(
                                    minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                    maxAccumulatedFrameSize: maxMessageBytes),
                                WebSocketFrameHandler(inbox: inbox))
                            return Upgrade.upgraded
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: target.hostHeader)
                    headers.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", "))
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // The gateway's `auth_required` often shares a read with the 101 answer: keep those bytes.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: pipeline)
                    return (channel, upgraded)
                }
            }
        // A gateway that is shutting down may accept the connection and never answer the upgrade.
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        let result: Upgrade
        do {
            result = try await upgrade.get()
        } catch {
            try? await channel.close()
            throw TransportError(TLSChannel.describe(error))
        }
        guard case .upgraded = result else {
            try? await channel.close()
            throw TransportError("\(url.absoluteString) did not accept a WebSocket")
        }
        return NIOWebSocketConnection(channel: channel, inbox: inbox)
    }
}

/// A connected session: sends masked text frames; `close` starts the closing handshake.
final class NIOWebSocketConnection: WebSocketConnection {
    let channel: any Channel
    let inbox: TransportInbox

    init(channel: any Channel, inbox: TransportInbox) {
        self.channel = channel
        self.inbox = inbox
    }

    func send(_ text: String) async throws {
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text))
        try await channel.writeAndFlush(frame)
    }

    func close(code: Int, reason: String) async {
        var data = ByteBuffer()
        data.writeInteger(UInt16(clamping: code))
        data.writeString(reason)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        try? await channel.writeAndFlush(frame)
        // The gateway answers the close frame and closes the socket; a dead link never does.
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }
}

/// Reads the upgraded stream: texts into the inbox, pongs for pings, the close frame's code and reason.
private final class WebSocketFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let inbox: TransportInbox
    private var closeCode: Int?
    private var closeReason = ""
    private var sawClose = false
    private var error: (any Error)?

    init(inbox: TransportInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            inbox.push(String(buffer: frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            if !sawClose {
                sawClose = true
                closeCode = data.readInteger(as: UInt16.self).map(Int.init)
                closeReason = data.readString(length: data.readableBytes) ?? ""
            }
            // Answer the close (echoing its code) and let the server close the socket; close it ourselves soon after.
            var echo = ByteBuffer()
            if let closeCode { echo.writeInteger(UInt16(closeCode)) }
            let reply = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: echo)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in
                channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
            }
        default:
            break  // pongs, binary: nothing for lanpush.v1
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.error = error
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if sawClose {
            inbox.finish(code: closeCode ?? 1005, reason: closeReason)
        } else {
            inbox.finish(code: nil, reason: error.map(TLSChannel.describe) ?? "connection lost")
        }
        context.fireChannelInactive()
    }
}

/// Host, port and path of a `ws(s)://` or `http(s)://` URL.
struct Endpoint: Sendable {
    let host: String
    let port: Int
    let path: String
    let secure: Bool

    init(url: URL, secureSchemes: Set<String>) throws {
        guard let scheme = url.scheme?.lowercased(), var host = url.host, !host.isEmpty else {
            throw TransportError("not a usable URL: \(url.absoluteString)")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        secure = secureSchemes.contains(scheme)
        port = url.port ?? (secure ? 443 : 80)
        // As written: `url.path` would decode an escaped `/` or `?` inside a segment (a tag, a device id).
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var path = components?.percentEncodedPath ?? url.path
        if path.isEmpty { path = "/" }
        if let query = components?.percentEncodedQuery ?? url.query { path += "?" + query }
        self.path = path
    }

    var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}
#endif
