/// The live preview's files, compiled into the binary so lanpushd serves them with no files next to it.
enum PreviewAssets {
    /// Content type and bytes for a GET path, or nil when the path is not a preview asset.
    static func page(for path: String) -> (contentType: String, body: [UInt8])? {
        nil
    }
}
