/**
 * Certificate pinning on Node.js, for a gateway with its own self-signed certificate (`tls.enabled`): no CA vouches
 * for it, so the client accepts exactly the certificate whose SHA-256 it was given — a pairing URL's `fp`, the
 * `fingerprint` a redeemed pairing answers, or the `fp` of the gateway's mDNS TXT record — whoever signed it and
 * whatever name it carries.
 *
 * The check runs before the connection is handed to HTTP or WebSocket: a TLS connection is made, the peer's
 * certificate compared, and only a matching connection is given to the request. So nothing — not the pairing code,
 * not the WebSocket upgrade — is ever written to a peer with another certificate, or with none.
 *
 * Node's own `fetch` and `WebSocket` take no TLS options, so this entry brings its own `fetch` (on `node:https`)
 * and drives the `ws` package's WebSocket, which the caller passes in (`import WebSocket from "ws"`): the library
 * itself stays free of dependencies.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { Agent, request } from "node:https";
import { isIP } from "node:net";
import { connect, TLSSocket } from "node:tls";
import { normalizeFingerprint, PairingError, readPairing, redeemPairing } from "../pairing.js";
import type { Paired, PairingFetch } from "../pairing.js";
import type { CloseEventLike, MessageEventLike, SocketFactory, WebSocketLike } from "../transport.js";

export { normalizeFingerprint };

/** The gateway presented another certificate than the pinned one, or none. */
export class FingerprintMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FingerprintMismatchError";
  }
}


/** The fingerprint lanpushd publishes: the hex SHA-256 of the certificate's DER. */
export function fingerprintOf(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

/**
 * An `https.Agent` whose every connection is to the certificate with this fingerprint. Each connection is checked
 * (none is kept alive for reuse), so a gateway that changes its certificate is refused from the next connection on.
 */
export class PinnedAgent extends Agent {
  readonly fingerprint: string;

  constructor(fingerprint: string) {
    super({ keepAlive: false });
    this.fingerprint = normalizeFingerprint(fingerprint);
  }

  override createConnection(
    options: { host?: string; port?: number | string },
    callback: (error: Error | null, socket?: TLSSocket) => void,
  ): undefined {
    const host = options.host ?? "localhost";
    // No CA check (`rejectUnauthorized: false`): the fingerprint below replaces it. No SNI for an address literal
    // (RFC 6066 allows host names only).
    const socket = connect({
      host,
      port: Number(options.port ?? 443),
      servername: isIP(host) ? undefined : host,
      rejectUnauthorized: false,
      minVersion: "TLSv1.2",
    });
    const failed = (error: Error) => callback(error);
    socket.once("error", failed);
    socket.once("secureConnect", () => {
      socket.removeListener("error", failed);
      const der = socket.getPeerCertificate(true)?.raw;
      const got = der && der.length > 0 ? fingerprintOf(der) : null;
      if (got !== this.fingerprint) {
        const error = new FingerprintMismatchError(
          got ? `certificate fingerprint ${got} is not the pinned ${this.fingerprint}` : "the gateway presented no certificate",
        );
        socket.destroy();
        callback(error);
        return;
      }
      callback(null, socket);
    });
    return undefined;
  }
}

/** A `fetch` for `redeemPairing` over `https://`, pinned; a request without an answer fails after `timeoutMs`. */
export function pinnedFetch(fingerprint: string, options: { timeoutMs?: number } = {}): PairingFetch {
  const agent = new PinnedAgent(fingerprint);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return (url, init) =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: init.method, headers: { ...init.headers, "Content-Length": Buffer.byteLength(init.body) }, agent },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => (text += chunk));
          response.on("error", reject);
          response.on("end", () => resolve({ status: response.statusCode ?? 0, json: async () => JSON.parse(text) }));
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end(init.body);
    });
}

/** The `ws` package's WebSocket constructor, as much of it as the pinned socket uses. */
export type WsConstructor = new (
  url: string,
  protocols: string[],
  options: { agent: Agent; perMessageDeflate: boolean },
) => WebSocketLike;

/**
 * A `createSocket` for `LanpushClient` that connects over `wss://` to the certificate with this fingerprint, through
 * the `ws` package (`pinnedSocketFactory(fp, WebSocket)` with `import WebSocket from "ws"`). A refused certificate
 * closes the attempt like any failed connection (1006, then the client's backoff), with the reason in the close's
 * `reason` — so in the client's `status` event — rather than lost in an error event the client does not read.
 */
export function pinnedSocketFactory(fingerprint: string, WebSocket: WsConstructor): SocketFactory {
  const agent = new PinnedAgent(fingerprint);
  return (url, protocols) => {
    if (!/^wss:\/\//i.test(url)) throw new Error(`a pinned connection needs a wss:// URL, not ${url}`);
    return new PinnedSocket(new WebSocket(url, protocols, { agent, perMessageDeflate: false }));
  };
}

/** Passes everything through, and gives a close without a reason the error that caused it. */
class PinnedSocket implements WebSocketLike {
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: MessageEventLike) => void) | null = null;
  onclose: ((event: CloseEventLike) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  private failure = "";

  constructor(private readonly ws: WebSocketLike) {
    ws.onopen = (event) => this.onopen?.(event);
    ws.onmessage = (event) => this.onmessage?.(event);
    ws.onerror = (event) => {
      const message = (event as { message?: unknown } | null)?.message;
      if (typeof message === "string") this.failure = message;
      this.onerror?.(event);
    };
    ws.onclose = (event) => this.onclose?.({ code: event.code, reason: event.reason || this.failure });
  }

  get readyState(): number {
    return this.ws.readyState;
  }

  send(data: string): void {
    this.ws.send(data);
  }

  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }
}

/**
 * Redeems a pairing URL (or a short code, with the gateway's `address` and `fingerprint`) over `https://`, pinned to
 * the URL's `fp`. The result's `url` is `wss://…`; connect with `pinnedSocketFactory(paired.fingerprint, WebSocket)`.
 * A URL without `fp` comes from a gateway that serves no TLS: that is refused here (use `redeemPairing`).
 */
export async function redeemPinnedPairing(
  input: string,
  options: { address?: string; fingerprint?: string; timeoutMs?: number } = {},
): Promise<Paired & { fingerprint: string }> {
  const { fingerprint } = readPairing(input, options);
  if (!fingerprint) {
    throw new PairingError("no fingerprint to pin: the pairing URL has no fp (the gateway serves no TLS) and none was given", null);
  }
  const paired = await redeemPairing(input, {
    fetch: pinnedFetch(fingerprint, options),
    address: options.address,
    fingerprint: options.fingerprint,
    tls: true,
  });
  return { ...paired, fingerprint };
}
