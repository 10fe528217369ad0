import Testing

@testable import LanpushLWS

@Suite struct HTTPHeaderFieldsTests {
    /// Names are kept once, in lower case: a request built from names in any case is read back by any case, and a
    /// name given twice in two cases keeps one value.
    @Test func aHeaderIsFoundByItsNameInAnyCase() {
        let request = HTTPRequest(
            method: .post, path: "/v1/push", headers: ["Content-Type": "application/json", "X-Forwarded-For": "10.0.0.2"])
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("X-FORWARDED-FOR") == "10.0.0.2")
        #expect(request.header("authorization") == nil)
        #expect(request.headers.count == 2)
        let twice = HTTPHeaderFields(["Accept": "a", "accept": "a"])
        #expect(twice.count == 1 && twice["accept"] == "a")
    }

    /// Setting replaces in place, `nil` removes, and the others keep their order.
    @Test func settingReplacesAndNilRemoves() {
        var fields = HTTPHeaderFields()
        fields["host"] = "gw.local"
        fields["content-length"] = "12"
        fields["accept"] = "*/*"
        fields["content-length"] = "13"
        #expect(fields.map(\.name) == ["host", "content-length", "accept"])
        #expect(fields["content-length"] == "13")
        fields["host"] = nil
        fields["absent"] = nil
        #expect(fields.map(\.name) == ["content-length", "accept"] && fields["host"] == nil)
    }
}
