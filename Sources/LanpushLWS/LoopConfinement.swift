import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Something that runs a loop thread: ``LWSServer`` and ``WSClientLoop``. State that only that thread may touch
/// can check it, in debug builds, with ``assertOnLoop(file:line:)`` or by living in a ``LoopBound``.
public protocol LoopConfined: AnyObject {
    /// The loop's thread record, which ``LoopBound`` keeps to check accesses against.
    var loopThread: LoopThread { get }
}

extension LoopConfined {
    /// Debug builds: traps unless called on the loop thread while the loop runs (before `run()` and after it
    /// returned, the owner may use the object from any one thread). Release builds: nothing.
    @inline(__always)
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        loopThread.check(file: file, line: line)
        #endif
    }
}

/// Which thread runs a loop, recorded while the loop runs (inside `run()`).
///
/// Why record it at all: lws is single-threaded and the adapter takes no locks, so a call from another thread is
/// a data race that usually works and sometimes corrupts lws's lists. The record turns such a call into an
/// immediate trap in debug builds (as swift-nio's `EventLoop.preconditionInEventLoop` does) and costs nothing in
/// release builds.
public final class LoopThread: Sendable {
    /// `pthread_self()` of the loop thread; 0 while the loop is not running.
    private let thread = Atomic<UInt>(0)

    init() {}

    /// On the thread that is about to run the loop.
    func enter() { thread.store(UInt(pthread_self()), ordering: .releasing) }

    /// The loop has stopped and torn down: nothing runs on its thread any more.
    func exit() { thread.store(0, ordering: .releasing) }

    /// Whether the caller may touch loop-confined state: it is the loop thread, or the loop is not running.
    public var isCurrent: Bool {
        let loop = thread.load(ordering: .acquiring)
        return loop == 0 || loop == UInt(pthread_self())
    }

    func check(file: StaticString, line: UInt) {
        precondition(isCurrent, "called off the loop thread", file: file, line: line)
    }

    /// ``LoopConfined/assertOnLoop(file:line:)`` for objects that keep the record rather than their loop (a
    /// connection, an answer handle): nothing in release builds, not even a load of the loop.
    @inline(__always)
    func assertCurrent(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        check(file: file, line: line)
        #endif
    }
}

/// A value that only its loop's thread may use, as swift-nio's `NIOLoopBound`: the box itself is `Sendable`, so it
/// can travel through a closure that runs on the loop later (a completion posted back from another thread), and
/// every access checks the thread in debug builds.
public struct LoopBound<Value>: @unchecked Sendable {
    private let box: Box
    private let thread: LoopThread

    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Creates the box on the loop's thread (or before the loop runs).
    public init(_ value: Value, on loop: some LoopConfined) {
        thread = loop.loopThread
        #if DEBUG
        thread.check(file: #fileID, line: #line)
        #endif
        box = Box(value)
    }

    /// The value; loop thread only (checked in debug builds).
    public var value: Value {
        get {
            #if DEBUG
            thread.check(file: #fileID, line: #line)
            #endif
            return box.value
        }
        nonmutating set {
            #if DEBUG
            thread.check(file: #fileID, line: #line)
            #endif
            box.value = newValue
        }
    }
}
