import CLibWebSockets

/// The protocol callback of the server's vhost: every lws event of the listening side arrives here and goes to
/// the part of the server that owns it — admission, HTTP transactions, WebSocket sessions.
///
/// lws reaches the server through `lws_context_user`. Loop thread only.
extension LWSServer {
    fileprivate func callback(
        _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ inp: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        if loop.tearingDown { loop.duringTeardown() }
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            loopWoken()
            return 0

        // ---- Admission: a new connection, before any byte of it is read ----
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            // lws passes the accept arguments (socket and peer address) as `user`.
            if isStopping { return 1 }
            return admission.admit(user) ? 0 : 1

        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            guard let wsi else { return 0 }
            connectionAccepted(wsi)
            return 0

        // ---- HTTP ----
        case LWS_CALLBACK_HTTP:
            guard let wsi, let user else { return -1 }
            admission.headersDone(lws_get_network_wsi(wsi) ?? wsi)
            return http.headersParsed(wsi, user, inp, len)

        case LWS_CALLBACK_HTTP_BODY:
            guard let user else { return 0 }
            return http.bodyReceived(user, inp, len)

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let wsi, let user else { return 0 }
            return http.bodyComplete(wsi, user)

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi, let user else { return 0 }
            return http.writable(wsi, user)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let user { http.forget(user) }
            return 0

        // lws 4.1 turns a CONNECT request into a raw socket: answer 405 in JSON and close.
        case LWS_CALLBACK_RAW_ADOPT:
            guard let wsi else { return 0 }
            admission.headersDone(wsi)
            lws_callback_on_writable(wsi)
            return 0

        case LWS_CALLBACK_RAW_WRITEABLE:
            guard let wsi else { return -1 }
            let body = rejectionBody(
                status: 405, message: "method not allowed", field: "method", rule: "method_not_allowed")
            responses.writeClosingAnswer(wsi, status: 405, reason: HTTPResponseWriter.reason(405), body: body)
            return -1

        // ---- WebSocket ----
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            guard let wsi else { return -1 }
            admission.headersDone(wsi)
            return sessions.confirmUpgrade(wsi, inp)

        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            guard let wsi else { return 1 }
            return sessions.acceptsProtocol(wsi)

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi, let user else { return -1 }
            admission.connectionDone(wsi)
            http.forget(user)
            return sessions.established(wsi, user)

        case LWS_CALLBACK_RECEIVE:
            guard let wsi, let user else { return 0 }
            return sessions.received(user, wsi, inp, len)

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let user else { return 0 }
            return sessions.writable(user, wsi)

        case LWS_CALLBACK_RECEIVE_PONG:
            guard let user else { return 0 }
            sessions.pong(user)
            return 0

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let user else { return 0 }
            return sessions.peerClosed(user, inp, len)

        case LWS_CALLBACK_CLOSED:
            guard let user else { return 0 }
            sessions.closed(user)
            connectionGone()
            return 0

        case LWS_CALLBACK_WSI_DESTROY:
            guard let wsi else { return 0 }
            admission.connectionDone(wsi)
            sessions.forget(wsi)
            capture.forget(wsi)
            return 0

        default:
            return 0
        }
    }

    /// A connection lws just accepted: bound its wait for request headers.
    ///
    /// lws arms its header timeout only when it hands the connection a header table, so one waiting for a table
    /// has none: the backstop covers that wait. For a counted connection the adapter answers first, from a sweep
    /// that runs once a second while any connection is still sending headers (one timer for all of them, not one
    /// each).
    private func connectionAccepted(_ wsi: OpaquePointer) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_HOLDING_AH, Int32(clamping: options.headerTimeout + 2))
        let wasIdle = !admission.hasPending
        admission.bind(wsi, deadline: lws_now_usecs() + Int64(options.headerTimeout) * 1_000_000)
        if wasIdle && admission.hasPending { scheduleHeaderSweep() }
    }

    private func scheduleHeaderSweep() {
        schedule(after: 1) { [weak self] in
            guard let self, !self.isTearingDown else { return }
            for wsi in self.admission.takeExpired(now: lws_now_usecs()) { self.answerHeaderTimeout(wsi) }
            if self.admission.hasPending { self.scheduleHeaderSweep() }
        }
    }

    /// A connection that has not completed its first request's headers in ``LWSServerOptions/headerTimeout``: 400
    /// when a request line arrived (its headers are malformed in a way lws 4.1 cannot report, or unfinished), 408
    /// when nothing did; then the connection closes. lws would close it a little later without a word.
    private func answerHeaderTimeout(_ wsi: OpaquePointer) {
        let seen = capture.requestLineSeen(wsi)
        let status = seen ? 400 : 408
        let message =
            seen
            ? "request headers malformed or incomplete after \(options.headerTimeout) s"
            : "no request within \(options.headerTimeout) s"
        let body = rejectionBody(status: status, message: message, field: "headers", rule: "header_timeout")
        responses.writeClosingAnswer(wsi, status: status, reason: HTTPResponseWriter.reason(status), body: body)
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }
}

/// The protocol callback's C entry point.
func lanpushLWSServerCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ inp: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let me = lws_context_user(ctx) else { return 0 }
    return Unmanaged<LWSServer>.fromOpaque(me).takeUnretainedValue().callback(wsi, reason, user, inp, len)
}
