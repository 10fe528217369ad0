/// A JSON value worked out when it is read, not when it is made: for values most holders never read.
///
/// The relay body of an accepted update is the case it exists for: every update a LAN device takes keeps the body
/// Home Assistant's relay would need should the device leave before acknowledging it, and nearly every one is
/// acknowledged and replaced without the body ever being read. Building each (copying the request's object, resolving
/// `when`, adding the device's registration) was ~5 % of the instructions of an HTTP ingest; keeping how to build it
/// is one small allocation. Not memoized: a value type whose every copy may be read on any thread, and the rare reader
/// (a hand-over to the relay) reads it once.
public struct DeferredJSON: Sendable {
    private let make: @Sendable () -> JSONValue

    /// `make` is called at every read and must give the same value each time: capture values, not references to
    /// state that changes.
    public init(_ make: @escaping @Sendable () -> JSONValue) {
        self.make = make
    }

    /// A value already at hand.
    public init(_ value: JSONValue) {
        make = { value }
    }

    public var value: JSONValue { make() }
}
