@testable import LanpushCore

extension Coalescer {
    /// `next` as the gateway's session writer uses it: the frame, with the resume points it made unsafe marked in the
    /// device's ledger.
    mutating func next(ledger: inout DeviceLedger, now: Double, patches: PatchMemo? = nil) -> OutboundEvent? {
        let (event, unsafe) = next(ledger: ledger, now: now, patches: patches)
        for seq in unsafe { ledger.markUnsafeResumePoint(seq) }
        return event
    }
}
