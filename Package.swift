// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "lanpush",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lanpushd", targets: ["lanpushd"]),
        .executable(name: "lanpush", targets: ["lanpush"]),
        .library(name: "LanpushCore", targets: ["LanpushCore"]),
        // The lanpush.v1 client for apps, widgets and the CLI: no libwebsockets, so it builds on Apple platforms.
        .library(name: "LanpushClient", targets: ["LanpushClient"]),
        // For the fuzz targets (Fuzz/, a separate package so this build never needs fuzzer flags).
        .library(name: "LanpushGateway", targets: ["LanpushGateway"]),
        .library(name: "LanpushStore", targets: ["LanpushStore"]),
        .library(name: "LanpushTesting", targets: ["LanpushTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        // SHA-256 of device tokens (stored hashed) and of the TLS certificate (its fingerprint).
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"6.0.0"),
        // The self-signed certificate made at first start when TLS is on without one.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.1.0"),
        // lanpush-bench only (latency histograms).
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        // LanpushClient's WebSocket and HTTP on Linux (Apple platforms use URLSession): NIO's own WebSocket codec
        // and TLS with a verification callback, which is where a pairing URL's fingerprint is pinned.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
    ],
    targets: [
        // Pure domain core: Foundation at most, no C, no I/O, clock injected.
        .target(name: "LanpushCore"),

        // The two system libraries, each seen only by its thin adapter module.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // No pkgConfig here: avahi-client.pc adds -D_REENTRANT, which SwiftPM rejects with a warning on
        // every build. Its headers live in /usr/include and the modulemap links the libraries itself.
        .systemLibrary(name: "CAvahiClient"),
        // The CLI only: pairing URLs as QR codes (the daemon needs no QR library).
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // In front of lws's log call: a level that is off costs a load and a test, not a variadic call
        // (Sources/CLWSLogFilter/lws_log_filter.c). The executable must export the definition for lws to use it.
        .target(
            name: "CLWSLogFilter",
            dependencies: ["CLibWebSockets"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=_lws_log"])]
        ),
        .target(
            name: "LanpushLWS",
            dependencies: ["CLibWebSockets", "CLWSLogFilter"]
        ),
        .target(
            name: "LanpushAvahi",
            dependencies: ["CAvahiClient"]
        ),

        // Durable state: SQLite through GRDB (WAL), committed on the lws loop or by a group-commit thread (bursts, synchronous = full).
        .target(
            name: "LanpushStore",
            dependencies: [
                "LanpushCore", .product(name: "GRDB", package: "GRDB.swift"),
                // sqlite3_wal_hook: DirectCommitter learns the WAL's size from each commit.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),

        // The gateway's HTTP client (relay path, HA's REST API): JSON over lws's own client with a hard timeout.
        .target(name: "LanpushHTTPClient", dependencies: ["LanpushCore", "LanpushLWS"]),
        // Signals, rlimits and systemd's notify socket for the two executables: Glibc stays here.
        .target(name: "LanpushPlatform"),

        // The client library: the shared reducer (on the core's JSONValue and MergePatch), the reconnecting
        // session, stores, pairing. NIO only on Linux; Apple platforms get URLSessionWebSocketTask.
        .target(
            name: "LanpushClient",
            dependencies: [
                "LanpushCore",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // The Material Design Icons set for the pages, linked in with C23 `#embed` (Sources/CMDIIcons/icons.c).
        .target(name: "CMDIIcons", exclude: ["mdi.json.gz", "LICENSE"]),

        // The gateway: config, HTTP routes, session protocol, the loop-owned parts.
        .target(
            name: "LanpushGateway",
            dependencies: [
                "CMDIIcons",
                "LanpushCore",
                "LanpushLWS",
                "LanpushAvahi",
                "LanpushStore",
                "LanpushHTTPClient",
                "LanpushPlatform",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            // The live preview and the wall view (HTML, CSS, the committed JS bundles): byte arrays in the binary.
            resources: [.embedInCode("Preview/Assets")]
        ),
        // An in-process gateway for tests: manual clock, recording sessions and relay, HTTP driver, temporary store.
        .target(
            name: "LanpushTesting",
            dependencies: [
                "LanpushGateway", "LanpushCore", "LanpushLWS", "LanpushStore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "lanpushd",
            dependencies: [
                "LanpushCore",
                "LanpushGateway",
                "LanpushStore",
                "LanpushPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .executableTarget(
            name: "lanpush",
            dependencies: [
                "LanpushCore",
                "LanpushClient",
                "LanpushAvahi",
                "LanpushPlatform",
                "CQRencode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // The benchmark load tool (docs/BENCHMARKS.md): starts lanpushd and mosquitto, drives both natively.
        .executableTarget(
            name: "lanpush-bench",
            dependencies: [
                "LanpushCore",
                "LanpushLWS",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(
            name: "LanpushCoreTests",
            dependencies: [
                "LanpushCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "LanpushGatewayTests",
            dependencies: ["LanpushGateway", "LanpushCore", "LanpushTesting", "LanpushLWS", "LanpushStore"]
        ),
        .testTarget(
            name: "LanpushStoreTests",
            // GRDB itself: the tests open a second connection to the store's file, as another process would.
            dependencies: ["LanpushStore", "LanpushCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "LanpushAvahiTests", dependencies: ["LanpushAvahi"]),
        .testTarget(name: "LanpushLWSTests", dependencies: ["LanpushLWS"]),
        .testTarget(name: "LanpushPlatformTests", dependencies: ["LanpushPlatform"]),
        // Against the real lanpushd (built as a product) and the protocol vectors; a local TLS proxy for pinning.
        .testTarget(
            name: "LanpushClientTests",
            dependencies: [
                "LanpushClient",
                "LanpushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
