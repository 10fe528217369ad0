import CMDIIcons

/// Every Material Design Icon (7.4.47, the set HA's frontend uses), as gzip-compressed JSON of SVG paths: 7,447
/// icons, 790 KB in the binary. Linked in by the `CMDIIcons` C target with `#embed` rather than `.embedInCode`,
/// whose `[UInt8]` literal would cost the Swift compiler minutes for this size (see Sources/CMDIIcons/icons.c).
/// Served compressed as it is: every browser decodes `Content-Encoding: gzip`. scripts/mdi-icons makes the file.
enum MDIIcons {
    static let gzip = Array(UnsafeBufferPointer(start: lanpush_mdi_icons_bytes(), count: lanpush_mdi_icons_size()))
    static let asset = PageAsset("application/json", gzip, encoding: "gzip")
}
