import CAvahiClient
import Testing

@testable import LanpushAvahi

/// The publisher's retry schedule and what it tells the log about the D-Bus system bus, without a bus: the
/// publisher's own test (ServicePublisherTests) checks the same against a missing bus in real time.
struct RetryBackoffTests {
    @Test func theWaitDoublesFromTheFirstIntervalUpToTheCap() {
        var backoff = RetryBackoff(initial: 5, maximum: 240)
        let delays = (0..<9).map { _ in backoff.delayAfterFailure() }
        #expect(delays == [5, 10, 20, 40, 80, 160, 240, 240, 240])
        #expect(backoff.failures == 9)
    }

    @Test func aSuccessStartsTheScheduleAgain() {
        var backoff = RetryBackoff(initial: 5, maximum: 240)
        for _ in 0..<4 { _ = backoff.delayAfterFailure() }
        backoff.reset()
        #expect(backoff.delayAfterFailure() == 5)
        #expect(backoff.delayAfterFailure() == 10)
    }

    @Test func aCapBelowTheFirstIntervalIsTheFirstInterval() {
        var backoff = RetryBackoff(initial: 5, maximum: 1)
        #expect(backoff.delayAfterFailure() == 5)
        #expect(backoff.delayAfterFailure() == 5)
    }

    @Test func aGatewayThatRunsForDaysStaysAtTheCap() {
        var backoff = RetryBackoff(initial: 5, maximum: 240)
        // A day at the cap is about 360 failures: the exponent must not overflow on the way.
        for _ in 0..<1000 { _ = backoff.delayAfterFailure() }
        #expect(backoff.delayAfterFailure() == 240)
    }

    @Test func anOutageIsReportedOnceAndItsEndOnce() {
        var report = BusOutageReport()
        #expect(report.reached() == false, "no outage yet, nothing to say")
        let noDaemon = Int32(LP_AVAHI_ERR_NO_DAEMON)
        #expect(report.failed(error: noDaemon) == true)
        for _ in 0..<50 { #expect(report.failed(error: noDaemon) == false) }
        #expect(report.reached() == true)
        #expect(report.reached() == false)
        #expect(report.failed(error: noDaemon) == true, "a new outage is news again")
    }

    @Test func aDifferentReasonIsReportedAgain() {
        var report = BusOutageReport()
        let noDaemon = Int32(LP_AVAHI_ERR_NO_DAEMON)
        let dbusError = Int32(LP_AVAHI_ERR_DBUS_ERROR)
        #expect(report.failed(error: noDaemon) == true)
        #expect(report.failed(error: dbusError) == true)
        #expect(report.failed(error: dbusError) == false)
        #expect(report.reportedError == dbusError)
    }

    @Test func delaysReadAsTheLogWritesThem() {
        #expect(formatSeconds(5) == "5 s")
        #expect(formatSeconds(0.5) == "0.5 s")
        #expect(formatSeconds(90) == "90 s")
        #expect(formatSeconds(240) == "4 min")
    }
}
