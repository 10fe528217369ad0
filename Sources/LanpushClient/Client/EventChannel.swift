import Foundation

/// The client's events as an `AsyncSequence` with one consumer. Delivery is a rendezvous: `deliver` returns once the
/// consumer came back for the next event (so the previous one was handled), which is what lets the client acknowledge
/// a frame only after the app handled it, and lets a slow app slow the stream instead of piling events up.
public struct ClientEvents: AsyncSequence, Sendable {
    public typealias Element = ClientEvent
    let channel: EventChannel

    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: Consumer(channel: channel))
    }

    public struct Iterator: AsyncIteratorProtocol {
        let consumer: Consumer

        public mutating func next() async -> ClientEvent? {
            await consumer.channel.next()
        }
    }

    /// Leaving a `for await` loop drops the iterator: the event in hand counts as handled, and the client pauses
    /// until the loop is entered again or the client is stopped.
    final class Consumer: Sendable {
        let channel: EventChannel
        init(channel: EventChannel) { self.channel = channel }
        deinit { channel.consumerLeft() }
    }
}

final class EventChannel: @unchecked Sendable {
    private struct Pending {
        let event: ClientEvent
        let handled: CheckedContinuation<Bool, Never>
    }

    private let lock = NSLock()
    private var queue: [Pending] = []
    /// The event the consumer holds now: handled when it asks for the next one.
    private var inHand: CheckedContinuation<Bool, Never>?
    private var consumer: CheckedContinuation<ClientEvent?, Never>?
    private var finished = false

    /// Hands `event` to the consumer and waits until it was handled: true, or false when the channel finished first
    /// (the client is stopping and the event never reached the app).
    func deliver(_ event: ClientEvent) async -> Bool {
        await withCheckedContinuation { (handled: CheckedContinuation<Bool, Never>) in
            let (waiting, dropped): (CheckedContinuation<ClientEvent?, Never>?, Bool) = lock.withLock {
                if finished { return (nil, true) }
                if let c = consumer {
                    consumer = nil
                    inHand = handled
                    return (c, false)
                }
                queue.append(Pending(event: event, handled: handled))
                return (nil, false)
            }
            if dropped { handled.resume(returning: false) }
            waiting?.resume(returning: event)
        }
    }

    func next() async -> ClientEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ClientEvent?, Never>) in
                let (done, item): (CheckedContinuation<Bool, Never>?, ClientEvent??) = lock.withLock {
                    let done = inHand
                    inHand = nil
                    if !queue.isEmpty {
                        let pending = queue.removeFirst()
                        inHand = pending.handled
                        return (done, .some(pending.event))
                    }
                    if finished { return (done, .some(nil)) }
                    consumer = continuation
                    return (done, nil)
                }
                done?.resume(returning: true)
                if let item { continuation.resume(returning: item) }
            }
        } onCancel: {
            let waiting: CheckedContinuation<ClientEvent?, Never>? = lock.withLock {
                defer { consumer = nil }
                return consumer
            }
            waiting?.resume(returning: nil)
        }
    }

    func consumerLeft() {
        let done: CheckedContinuation<Bool, Never>? = lock.withLock {
            defer { inHand = nil }
            return inHand
        }
        done?.resume(returning: true)
    }

    /// No more events: the consumer's loop ends once it has taken what was handed out; queued events are dropped.
    func finish() {
        let (done, dropped, waiting): (CheckedContinuation<Bool, Never>?, [Pending], CheckedContinuation<ClientEvent?, Never>?) =
            lock.withLock {
                finished = true
                defer {
                    inHand = nil
                    queue = []
                    consumer = nil
                }
                return (inHand, queue, consumer)
            }
        done?.resume(returning: true)
        for p in dropped { p.handled.resume(returning: false) }
        waiting?.resume(returning: nil)
    }
}
