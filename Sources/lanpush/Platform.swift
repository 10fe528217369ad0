import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The CLI's only contact with the OS beyond Foundation: termination signals.
enum Platform {
    /// Runs `handler` (on a background queue) for every SIGINT / SIGTERM. Keep the returned sources alive.
    static func onTermination(_ handler: @escaping @Sendable (Int32) -> Void) -> [DispatchSourceSignal] {
        let queue = DispatchQueue(label: "lanpush.signals")
        return [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { handler(sig) }
            source.resume()
            return source
        }
    }

    static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
