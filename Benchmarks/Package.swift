// swift-tools-version: 6.1
// Micro-benchmarks of lanpush's core hot path (ordo-one/benchmark). A separate package on purpose: CI's main
// build never compiles ordo-one/benchmark. Run from this folder: `swift package benchmark` (see docs/BENCHMARKS.md).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder ("lanpush", "main", ...): read it rather than guess.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootPackage = root.lastPathComponent.lowercased()

let package = Package(
    name: "lanpush-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoreHotPath",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LanpushCore", package: rootPackage),
            ],
            path: "CoreHotPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
