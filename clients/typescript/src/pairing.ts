/**
 * Pairing: an admin makes a one-time pairing for a device (`lanpush pair DEVICE`, the preview's Devices panel, or
 * `POST /v1/pairings`); the client takes the pairing URL (scanned from its QR code, or pasted) or the short code,
 * redeems it once with `POST /v1/pair {"code"}` and gets the device's token (docs/CLIENTS.md, "Pairing URL").
 *
 *     lanpush://HOST:PORT/pair?code=CODE[&fp=SHA256][&alt=HOST:PORT]...
 *
 * By default this redeems and connects over plain HTTP and WebSocket: neither a browser's `fetch` nor the Scripting
 * app's can pin a certificate by its fingerprint, and a self-signed certificate is all a home gateway has. So it
 * needs the gateway's `tls.plain` (on by default). On Node.js, `redeemPinnedPairing` (the `node` entry) redeems over
 * `https://` and connects over `wss://`, both pinned to the fingerprint; `tls: true` here is what it uses.
 */

export interface PairingURL {
  /** `HOST:PORT` entries to try in turn: the URL's own, then each `alt`. */
  addresses: string[];
  code: string;
  /** Hex SHA-256 of the gateway's certificate when it serves TLS. */
  fingerprint: string | null;
}

/** What `fetch` must offer: the WHATWG one, Node's, and the Scripting app's all do. */
export type PairingFetch = (
  url: string,
  init: { method: string; headers: { [name: string]: string }; body: string },
) => Promise<{ status: number; json(): Promise<any> }>;

export interface Paired {
  deviceId: string;
  token: string;
  /** The address that answered, `HOST:PORT`. */
  address: string;
  /** Where to connect: `ws://ADDRESS/v1/stream` (`wss://` when redeemed with `tls`). */
  url: string;
  fingerprint: string | null;
}

export class PairingError extends Error {
  /** The gateway's HTTP status (403: unknown, used or expired; 429: too many attempts), or null when none answered. */
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "PairingError";
  }
}

/** A pairing URL, or null when `text` is not one (a short code, say). */
export function parsePairingURL(text: string): PairingURL | null {
  const m = /^lanpush:\/\/([^/?#]+)\/pair\?([^#]*)$/i.exec(text.trim());
  if (!m) return null;
  // By hand, not URLSearchParams: the library runs where only the ECMAScript globals are (the Scripting app).
  const params: [string, string][] = m[2]
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const i = p.indexOf("=");
      const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
      return i < 0 ? [decode(p), ""] : [decode(p.slice(0, i)), decode(p.slice(i + 1))];
    });
  const get = (name: string) => params.find(([k]) => k === name)?.[1] ?? null;
  const code = get("code");
  if (!code) return null;
  const fp = get("fp");
  const alternatives = params.filter(([k, v]) => k === "alt" && v !== "").map(([, v]) => v);
  return { addresses: [m[1], ...alternatives], code, fingerprint: fp ? fp.replace(/:/g, "").toLowerCase() : null };
}

/**
 * Redeems a pairing URL, or a short code typed by hand (then `address`, `HOST:PORT` or a URL of the gateway, says
 * where). Tries each address of the URL until one answers; an answer that refuses the code ends the attempt.
 */
export async function redeemPairing(
  input: string,
  options: {
    fetch: PairingFetch;
    address?: string;
    /** `https://` and `wss://`: only with a `fetch` that checks the gateway's certificate (a pinning one). */
    tls?: boolean;
  },
): Promise<Paired> {
  const url = parsePairingURL(input);
  const code = url ? url.code : input.trim();
  if (!code) throw new PairingError("no pairing code: scan or paste the pairing URL, or type the short code", null);
  const addresses = url ? url.addresses : options.address ? [hostPort(options.address)] : [];
  if (addresses.length === 0) throw new PairingError("a short code needs the gateway's address", null);
  const [http, ws] = options.tls ? ["https", "wss"] : ["http", "ws"];
  let lastFailure = "";
  for (const address of addresses) {
    let answer: { status: number; json(): Promise<any> };
    try {
      answer = await options.fetch(`${http}://${address}/v1/pair`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code }),
      });
    } catch (e) {
      lastFailure = `${address}: ${(e as Error).message}`;
      continue;
    }
    const body = await answer.json().catch(() => null);
    if (answer.status === 200 && body && typeof body.token === "string") {
      return {
        deviceId: String(body.device_id),
        token: body.token,
        address,
        url: `${ws}://${address}/v1/stream`,
        fingerprint: typeof body.fingerprint === "string" ? body.fingerprint : url?.fingerprint ?? null,
      };
    }
    const message = body && typeof body.message === "string" ? body.message : `the gateway answered ${answer.status}`;
    const retryAfter = answer.status === 429 ? Number(/(\d+) s/.exec(message)?.[1] ?? NaN) : NaN;
    throw new PairingError(message, answer.status, Number.isFinite(retryAfter) ? retryAfter : null);
  }
  throw new PairingError(`no gateway answered (${lastFailure})`, null);
}

/** `192.168.1.5:8765`, `http://192.168.1.5:8765/`, `ws://…/v1/stream` → `192.168.1.5:8765`. */
function hostPort(address: string): string {
  return address.trim().replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "");
}
