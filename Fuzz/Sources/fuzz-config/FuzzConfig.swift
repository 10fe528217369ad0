import FuzzSupport
import LanpushGateway

/// The config loader (`lanpush.yaml`, and the HA add-on's `/data/options.json`, which YAML reads too): any text
/// either loads or is refused with a `ConfigError` naming a key — no crash, no hang — and loading is a function of
/// the text.
@main
struct FuzzConfig {
    static func main() {
        runFuzzer { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            let first: GatewayConfig
            do {
                first = try ConfigLoader.parse(text)
            } catch let error as ConfigError {
                Fuzz.require(!error.key.isEmpty && !error.message.isEmpty, "a refusal naming no key: \(error)")
                return
            } catch {
                return Fuzz.require(false, "not a ConfigError: \(error)")
            }
            Fuzz.require((1...65535).contains(first.listenPort) || first.listenPort == 0, "port \(first.listenPort)")
            Fuzz.require(first.session.window >= 1 && first.limits.maxBody >= 1024, "a limit below its minimum was accepted")
            let second = try? ConfigLoader.parse(text)
            Fuzz.require(second.map { "\($0)" } == "\(first)", "the same text loaded twice differently")
        }
    }
}
