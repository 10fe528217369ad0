import Testing

@testable import LanpushGateway

@Suite struct SameSecretTests {
    @Test(arguments: [
        ("s3cret-token", "s3cret-token", true),
        ("s3cret-toke", "s3cret-token", false),  // a prefix
        ("s3cret-tokenX", "s3cret-token", false),  // longer
        ("S3cret-token", "s3cret-token", false),  // first byte
        ("s3cret-tokeN", "s3cret-token", false),  // last byte
        ("", "", true),
        ("x", "", false),
        (String(repeating: "a", count: 256), "", false),  // lengths equal modulo 256
    ])
    func comparesWholeTokens(presented: String, secret: String, equal: Bool) {
        #expect(sameSecret(presented, secret) == equal)
    }

    @Test func noSecretMatchesNothing() {
        #expect(!sameSecret("", nil))
        #expect(!sameSecret("token", nil))
    }
}
