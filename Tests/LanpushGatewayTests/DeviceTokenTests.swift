import Testing
@testable import LanpushGateway

/// Token hashes are stored (devices added by pairing, the registry's rows), so their spelling is a format: the
/// lowercase hex of the SHA-256 of the token's UTF-8, the FIPS 180-2 test vectors below.
@Suite struct DeviceTokenTests {
    @Test func theHashIsTheLowercaseHexOfTheSHA256() {
        #expect(DeviceToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(DeviceToken.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func everyByteIsTwoDigits() {
        #expect([UInt8]([0x00, 0x0f, 0xa0, 0xff]).lowercaseHex == "000fa0ff")
        #expect([UInt8]().lowercaseHex == "")
    }
}
