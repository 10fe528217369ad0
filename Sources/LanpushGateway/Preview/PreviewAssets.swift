import LanpushOpenSSL

/// A file lanpushd serves from its own binary.
package struct PageAsset: Sendable, Equatable {
    let contentType: String
    let body: [UInt8]
    /// `gzip` when `body` is stored compressed (the icon set): sent as it is, with `Content-Encoding`.
    let encoding: String?
    /// A strong validator (a hash of the bytes): a browser revalidates and gets a 304 while the binary is the same.
    let etag: String

    init(_ contentType: String, _ body: [UInt8], encoding: String? = nil) {
        self.contentType = contentType
        self.body = body
        self.encoding = encoding
        self.etag = "\"" + SHA256Digest.of(body).prefix(12).lowercaseHex + "\""
    }

    /// What every page and its files are served with: a page that handles the admin token runs only the gateway's
    /// own scripts, talks only to the gateway, is never framed (clickjacking), is never read as another type, and
    /// sends no `Referer` (its URL may carry `?token=` for a moment).
    static let securityHeaders: [APIResponse.Header] = [
        .init(
            name: "Content-Security-Policy",
            value: "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        .init(name: "X-Frame-Options", value: "DENY"),
        .init(name: "X-Content-Type-Options", value: "nosniff"),
        .init(name: "Referrer-Policy", value: "no-referrer"),
    ]

    /// The answer to a GET: the asset, or 304 when the browser holds these very bytes.
    func response(ifNoneMatch: String?) -> APIResponse {
        // Revalidated on every use (no-cache), so a new lanpushd is picked up at once; unchanged files cost a 304.
        var headers = [APIResponse.Header(name: "Cache-Control", value: "no-cache"), .init(name: "ETag", value: etag)]
            + Self.securityHeaders
        let held = ifNoneMatch?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag } ?? false
        if !held, let encoding { headers.append(.init(name: "Content-Encoding", value: encoding)) }
        return .asset(contentType, headers: headers, body: body, notModified: held)
    }
}

/// The live preview and the wall view: real files under `Preview/Assets/` (the JS bundles are built from
/// `clients/preview` by `clients/preview/build.sh` and committed), embedded by SwiftPM's `.embedInCode` as
/// `PackageResources` byte arrays, plus the Material Design Icons set linked in by the `CMDIIcons` target.
/// Nothing is read from disk or the network at run time.
///
/// - `/`, `/preview`: the live preview (observer); `/wall`: one device full screen (device token).
/// - `/preview/{preview,wall}.js`, `/preview/{lockscreen,preview,wall}.css`: what those pages load.
/// - `/preview/mdi.json`: every MDI icon as an SVG path (`{version, count, icons}`), gzip-encoded.
/// - `/preview/licenses.txt`: the third-party notices (qrcode-generator, Material Design Icons).
enum PreviewAssets {
    static func asset(for path: String) -> PageAsset? {
        switch path {
        case "/", "/preview", "/preview/index.html": return files.preview
        case "/wall", "/wall/index.html": return files.wall
        case "/preview/preview.js": return files.previewJS
        case "/preview/wall.js": return files.wallJS
        case "/preview/lockscreen.css": return files.lockscreenCSS
        case "/preview/preview.css": return files.previewCSS
        case "/preview/wall.css": return files.wallCSS
        case "/preview/licenses.txt": return files.licenses
        case "/preview/mdi.json": return MDIIcons.asset
        default: return nil
        }
    }

    /// Built once, on first use (a static let): the ETags hash each file once per process.
    struct Files: Sendable {
        let preview = PageAsset("text/html; charset=utf-8", PackageResources.preview_html)
        let wall = PageAsset("text/html; charset=utf-8", PackageResources.wall_html)
        let previewJS = PageAsset("text/javascript; charset=utf-8", PackageResources.preview_js)
        let wallJS = PageAsset("text/javascript; charset=utf-8", PackageResources.wall_js)
        let lockscreenCSS = PageAsset("text/css; charset=utf-8", PackageResources.lockscreen_css)
        let previewCSS = PageAsset("text/css; charset=utf-8", PackageResources.preview_css)
        let wallCSS = PageAsset("text/css; charset=utf-8", PackageResources.wall_css)
        let licenses = PageAsset("text/plain; charset=utf-8", PackageResources.licenses_txt)
    }

    static let files = Files()
}
