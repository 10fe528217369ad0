import Foundation
import LanpushCore

@testable import LanpushStore

/// What the store's tests share: a fresh folder per test and the device row they write over and over.
enum StoreTestSupport {
    /// A new empty folder under the temporary directory, named for the suite that uses it.
    static func directory(_ label: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lanpush-\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Device `phone` at `seq`: each write of it replaces the last.
    static func deviceRow(_ seq: UInt64) -> StoreOp {
        .device(DeviceRow(id: "phone", epoch: "e", seq: seq, pushToken: nil, pushURL: nil, registrationInfo: [:],
                          liveActivityTokens: [:], pushToStartToken: nil, lastSeen: nil))
    }
}
