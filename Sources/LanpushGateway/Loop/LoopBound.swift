/// Carries a loop-thread closure through another thread and back; only ever called on the loop.
final class LoopBound<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
