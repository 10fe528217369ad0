import Testing

@testable import LanpushGateway

/// The pages lanpushd serves from its binary: every file a page names is embedded, revalidation answers 304, and
/// the icon set is the gzip file the CMDIIcons target links in.
@Suite struct PreviewAssetsTests {
    static let pages = ["/", "/preview", "/wall"]

    @Test(arguments: pages)
    func everyFileAPageNamesIsServed(page: String) throws {
        let asset = try #require(PreviewAssets.asset(for: page))
        #expect(asset.contentType == "text/html; charset=utf-8")
        let html = String(decoding: asset.body, as: UTF8.self)
        #expect(html.hasPrefix("<!doctype html>"))
        let refs = html.split(separator: "\"").filter { $0.hasPrefix("/preview/") }
        #expect(refs.count >= 3, "\(page): its styles and script")
        for ref in refs {
            let file = try #require(PreviewAssets.asset(for: String(ref)), "\(page) names \(ref)")
            #expect(!file.body.isEmpty)
        }
    }

    @Test func aBrowserHoldingTheBytesGetsA304() throws {
        let asset = try #require(PreviewAssets.asset(for: "/preview/wall.js"))
        let fresh = asset.response(ifNoneMatch: nil)
        #expect(fresh.status == 200 && fresh.body == asset.body)
        #expect(fresh.headers.contains(.init(name: "ETag", value: asset.etag)))
        let again = asset.response(ifNoneMatch: "\"other\", \(asset.etag)")
        #expect(again.status == 304 && again.body.isEmpty)
        #expect(asset.response(ifNoneMatch: "\"other\"").status == 200)
    }

    @Test func theIconSetIsServedGzipEncoded() throws {
        let asset = try #require(PreviewAssets.asset(for: "/preview/mdi.json"))
        #expect(asset.body.starts(with: [0x1f, 0x8b]), "gzip magic")
        #expect(asset.body.count > 500_000, "every icon, not a subset")
        #expect(asset.response(ifNoneMatch: nil).headers.contains(.init(name: "Content-Encoding", value: "gzip")))
        #expect(PreviewAssets.asset(for: "/preview/mdi-font") == nil, "Debian's 1.6.50 font is no longer served")
    }
}
