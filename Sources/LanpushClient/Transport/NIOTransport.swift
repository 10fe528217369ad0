#if !canImport(Darwin)
import Foundation
import LanpushCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The transport on Linux: SwiftNIO for the WebSocket and for plain HTTP requests (pairing's POST, the CLI's
/// requests). Foundation's URLSession on Linux has no WebSocket with Debian's libcurl, and cannot pin a certificate.
public struct PlatformTransport: LanpushTransport {
    public init() {}

    public func connect(to url: URL, subprotocols: [String], tls: TLSPolicy) async throws -> any WebSocketConnection {
        try await NIOWebSocketClient.connect(to: url, subprotocols: subprotocols, tls: tls)
    }

    public func post(to url: URL, body: JSONValue, tls: TLSPolicy) async throws -> (status: Int, body: JSONValue?) {
        let (status, bytes) = try await request("POST", to: url, body: body, tls: tls)
        return (status, bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
    }

    /// One HTTP/1.1 request on its own connection, with the same TLS policy as the stream: over `https://` a
    /// pinned certificate is checked before any byte of the request is sent. `bearer` becomes the
    /// `Authorization` header, `body` the JSON body. The answer's body is returned as it came.
    public func request(
        _ method: String, to url: URL, bearer: String? = nil, body: JSONValue? = nil, tls: TLSPolicy = .system,
        timeout seconds: Int64 = 10
    ) async throws -> (status: Int, body: [UInt8]) {
        try await NIOHTTPRequest.send(
            method: HTTPMethod(rawValue: method), to: url, bearer: bearer, body: body?.serializedBytes(), tls: tls,
            timeout: .seconds(seconds))
    }
}

/// One HTTP/1.1 request on its own connection (`Connection: close`), answered within `timeout`.
enum NIOHTTPRequest {
    static func send(
        method: HTTPMethod, to url: URL, bearer: String?, body: [UInt8]?, tls: TLSPolicy, timeout: TimeAmount
    ) async throws -> (status: Int, body: [UInt8]) {
        let target = try Endpoint(url: url, secureSchemes: ["https", "wss"])
        let sslContext = try target.secure ? TLSChannel.context(for: tls) : nil
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: (Int, [UInt8]).self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(5))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext { try TLSChannel.addHandler(to: channel, context: sslContext, host: target.host, tls: tls) }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise))
                    }
                }
                .connect(host: target.host, port: target.port).get()
        } catch {
            promise.fail(error)  // a promise must not be dropped unfulfilled
            throw TransportError(TLSChannel.describe(error))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        if let bearer { headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.count))
        } else if method == .POST || method == .PUT || method == .PATCH {
            headers.add(name: "Content-Length", value: "0")
        }
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: target.path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(TransportError("no answer from \(url.absoluteString) within \(timeout.nanoseconds / 1_000_000_000) s"))
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            let answer = try await promise.futureResult.get()
            channel.close(promise: nil)
            return answer
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
