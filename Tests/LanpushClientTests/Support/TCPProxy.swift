import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A loopback TCP proxy in front of the gateway: `cut()` kills every connection through it mid-stream (the link
/// dies under the client); with a TLS context it terminates TLS, standing in for a gateway that serves `wss://`.
final class TCPProxy: @unchecked Sendable {
    let targetPort: Int
    private let tls: NIOSSLContext?
    private let lock = NSLock()
    private var children: [any Channel] = []
    private var server: (any Channel)?

    init(targetPort: Int, tls: NIOSSLContext? = nil) {
        self.targetPort = targetPort
        self.tls = tls
    }

    var port: Int { server?.localAddress?.port ?? 0 }

    func listen() async throws -> TCPProxy {
        let targetPort = self.targetPort
        let tls = self.tls
        server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [weak self] inbound in
                self?.track(inbound)
                return ClientBootstrap(group: inbound.eventLoop)
                    .channelInitializer { outbound in
                        outbound.eventLoop.makeCompletedFuture {
                            try outbound.pipeline.syncOperations.addHandler(Forward(to: inbound))
                        }
                    }
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        if let tls { try inbound.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                        try inbound.pipeline.syncOperations.addHandler(Forward(to: outbound))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return self
    }

    private func track(_ channel: any Channel) {
        lock.withLock { children.append(channel) }
    }

    /// Closes every connection through the proxy; answers how many were open.
    @discardableResult
    func cut() -> Int {
        let open = lock.withLock {
            defer { children = [] }
            return children.filter(\.isActive)
        }
        for c in open { c.close(promise: nil) }
        return open.count
    }

    func close() {
        cut()
        server?.close(promise: nil)
    }
}

/// Copies bytes to the other side; when one side closes, so does the other.
private final class Forward: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let other: any Channel

    init(to other: any Channel) {
        self.other = other
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        other.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        other.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
