import Foundation

/// A pairing the iPhone's Camera can open. No app on an iPhone opens `lanpush://`, but the Scripting app opens its run
/// URL (`scripting://run/SCRIPT?key=value`, its "Script" docs: `Script.createRunURLScheme`) and hands the query to the
/// script as `Script.queryParameters` — to a running instance as a resume. The whole pairing URL travels in one
/// parameter, `pair`, so the lanpush script reads it with the parser it uses for a scanned pairing URL:
///
///     scripting://run/lanpush?pair=lanpush%3A%2F%2F192.168.1.5%3A8765%2Fpair%3Fcode%3D…
///
/// Every byte outside RFC 3986's unreserved set and `!*'()` is percent-encoded, exactly as JavaScript's
/// `encodeURIComponent` does, so this and the client library's `scriptingRunURL` (clients/typescript) write the same
/// URL, and the pairing URL's own `?`, `&` and `=` stay inside the one value.
public enum ScriptingRunURL {
    /// The query parameter that carries the pairing URL.
    public static let parameter = "pair"
    /// The name the set-up guide gives the script in Scripting.
    public static let defaultScriptName = "lanpush"

    /// `encodeURIComponent`'s set: what stays as it is.
    private static let kept = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")

    public static func make(pairing pairingURL: String, scriptName: String = defaultScriptName) -> String {
        "scripting://run/\(encode(scriptName))?\(parameter)=\(encode(pairingURL))"
    }

    static func encode(_ text: String) -> String {
        // Never nil for a String: every scalar is encodable as UTF-8.
        text.addingPercentEncoding(withAllowedCharacters: kept) ?? text
    }
}
