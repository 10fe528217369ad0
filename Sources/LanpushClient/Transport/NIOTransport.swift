#if !canImport(Darwin)
import Foundation
import LanpushCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The transport on Linux: SwiftNIO for the WebSocket and for pairing's one POST. (Foundation's URLSession on Linux
/// has no WebSocket with Debian's libcurl, and cannot pin a certificate.)
public struct PlatformTransport: LanpushTransport {
    public init() {}

    public func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection {
        try await NIOWebSocketClient.connect(to: url, subprotocols: subprotocols, tls: tls)
    }

    public func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        try await NIOHTTPPost.send(to: url, body: body.serializedBytes(), tls: tls)
    }
}

/// One HTTP/1.1 POST with a JSON body on its own connection (`Connection: close`), 10 s at most.
enum NIOHTTPPost {
    static func send(to url: URL, body: [UInt8], tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        let target = try Endpoint(url: url, secureSchemes: ["https", "wss"])
        let sslContext = try target.secure ? TLSChannel.context(for: tls) : nil
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: (Int, [UInt8]).self)
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext { try TLSChannel.addHandler(to: channel, context: sslContext, host: target.host, tls: tls) }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise))
                }
            }
            .connect(host: target.host, port: target.port).get()
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target.path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            promise.fail(TransportError("no answer from \(url.absoluteString) within 10 s"))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        do {
            let (status, bytes) = try await promise.futureResult.get()
            channel.close(promise: nil)
            return (status, bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
        } catch {
            channel.close(promise: nil)
            throw TransportError(TLSChannel.describe(error))
        }
    }
}

/// Collects one response: status and body; fails the promise if the connection ends first.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let promise: EventLoopPromise<(Int, [UInt8])>
    private var status = 0
    private var body: [UInt8] = []
    private var done = false

    init(promise: EventLoopPromise<(Int, [UInt8])>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body(let buffer): body += buffer.readableBytesView
        case .end:
            done = true
            promise.succeed((status, body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(TransportError("the connection closed before an answer"))
        }
        context.fireChannelInactive()
    }
}
#endif
