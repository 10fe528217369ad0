// swift-tools-version: 6.1
// libFuzzer targets (docs/RELIABILITY.md). A separate package on purpose: the main build never needs fuzzer
// flags. Built and run by `scripts/fuzz TARGET`, which passes -sanitize=address, the coverage instrumentation and
// libFuzzer's runtime without its main (each target's @main calls LLVMFuzzerRunDriver: SwiftPM links executables
// with its own `main` alias, which clashes with libFuzzer's).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder ("lanpush", "main", "wt-rel", ...): read it rather than guess.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootPackage = root.lastPathComponent.lowercased()

func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: "fuzz-\(name)",
        dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: rootPackage) })
}

let package = Package(
    name: "lanpush-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "LanpushCore", package: rootPackage)]),
        fuzzTarget("json", ["LanpushCore"]),
        fuzzTarget("payload", ["LanpushCore"]),
        fuzzTarget("session", ["LanpushCore", "LanpushTesting", "LanpushGateway"]),
        fuzzTarget("config", ["LanpushGateway"]),
        fuzzTarget("store", ["LanpushCore", "LanpushStore"]),
        fuzzTarget("router", ["LanpushCore", "LanpushTesting", "LanpushGateway"]),
    ],
    swiftLanguageModes: [.v6]
)
