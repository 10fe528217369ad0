import LanpushOpenSSL
import Testing

/// FIPS 180-2's SHA-256 examples: one block, two blocks (the padding spills over), and a million bytes.
@Suite struct SHA256DigestTests {
    @Test func theStandardsExamples() {
        #expect(SHA256Digest.of(utf8: "abc").lowercaseHex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.of(utf8: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").lowercaseHex
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256Digest.of([UInt8](repeating: 0x61, count: 1_000_000)).lowercaseHex
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(SHA256Digest.of([]).lowercaseHex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func aStringIsHashedAsItsUTF8() {
        let text = "Küche – 台所"
        #expect(SHA256Digest.of(utf8: text) == SHA256Digest.of(Array(text.utf8)))
        #expect(SHA256Digest.of(utf8: text).count == SHA256Digest.byteCount)
    }
}

extension Sequence<UInt8> {
    var lowercaseHex: String { map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}
