/// What a publisher says about itself: its log levels, its state machine, and the status snapshot health checks read.
extension ServicePublisher {
    public enum LogLevel: String, Sendable, Comparable {
        case debug, info, warning, error

        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warning: 2
            case .error: 3
            }
        }

        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
    }

    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Not started, or stopped.
        case stopped
        /// The D-Bus system bus cannot be reached; retrying on a timer.
        case waitingForBus
        /// D-Bus is fine but avahi-daemon is not running (or restarting); the service appears when it does.
        case waitingForDaemon
        /// The service is registered with avahi-daemon and being probed / announced.
        case registering
        /// The service is announced on the network under `currentName`.
        case established
        /// Avahi refused the service; `retrying` says whether the publisher will try again by itself.
        case failed(reason: String, retrying: Bool)

        public var description: String {
            switch self {
            case .stopped: "stopped"
            case .waitingForBus: "waiting for the D-Bus system bus"
            case .waitingForDaemon: "waiting for avahi-daemon"
            case .registering: "registering"
            case .established: "established"
            case .failed(let reason, let retrying): "failed: \(reason)\(retrying ? " (retrying)" : "")"
            }
        }
    }

    /// A consistent snapshot for status pages and health checks.
    public struct Status: Sendable, Equatable {
        public let state: State
        /// The name the service is (or will be) published under; differs from the requested name after a collision.
        public let name: String
        public let type: String
        public let port: UInt16
    }
}
