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

/** A pairing URL, or null when `text` is not one (a short code, say, or a URL `readPairing` refuses). */
export function parsePairingURL(text: string): PairingURL | null {
  const read = pairingURL(text.trim());
  return typeof read === "string" ? null : read;
}

/**
 * What a pairing names before it is redeemed: a pairing URL, or a code typed by hand (the short code, or the whole
 * code) with the gateway's `address` (`HOST:PORT` or a URL of the gateway) and, to pin it, its `fingerprint`. Throws a
 * `PairingError` (status null) for input that names no gateway or no code, or a fingerprint no certificate can have.
 */
export function readPairing(input: string, given: { address?: string; fingerprint?: string } = {}): PairingURL {
  const text = input.trim();
  if (text.includes("://")) {
    const read = pairingURL(text);
    if (typeof read === "string") throw new PairingError(read, null);
    return read;
  }
  if (!text) throw new PairingError("no pairing code: scan or paste the pairing URL, or type the short code", null);
  if (!given.address) throw new PairingError("a short code needs the gateway's address", null);
  const fingerprint = given.fingerprint ? hexFingerprint(given.fingerprint) : null;
  if (given.fingerprint && fingerprint === null) {
    throw new PairingError(`not a SHA-256 fingerprint (64 hex digits): ${given.fingerprint}`, null);
  }
  // Sent as typed: the gateway reads it case-insensitively, hyphens and spaces ignored, I/L as 1 and O as 0.
  return { addresses: [hostPort(given.address)], code: text, fingerprint };
}

/** Lowercase hex without separators (`AB:CD:…`, as `openssl x509 -fingerprint -sha256` prints it, works too). */
export function normalizeFingerprint(fingerprint: string): string {
  const fp = hexFingerprint(fingerprint);
  if (fp === null) throw new Error(`not a SHA-256 fingerprint (64 hex digits): ${JSON.stringify(fingerprint)}`);
  return fp;
}

/** `normalizeFingerprint`, or null when `fingerprint` is not one. */
function hexFingerprint(fingerprint: string): string | null {
  const fp = fingerprint.replace(/[\s:]/g, "").toLowerCase();
  return /^[0-9a-f]{64}$/.test(fp) ? fp : null;
}

/** The pairing URL in `text`, or why it is none. */
function pairingURL(text: string): PairingURL | string {
  const m = /^lanpush:\/\/([^/?#]*)\/pair\?([^#]*)$/i.exec(text);
  if (!m) return `not a pairing URL (lanpush://HOST:PORT/pair?code=…): ${text}`;
  if (!m[1]) return "the pairing URL names no address";
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
  if (!code) return "the pairing URL has no code";
  const fp = get("fp");
  const fingerprint = fp ? hexFingerprint(fp) : null;
  if (fp && fingerprint === null) return `the pairing URL's fp is not a SHA-256 fingerprint (64 hex digits): ${fp}`;
  // Each address once, in order: an `alt` may hold several, separated by spaces.
  const alternatives = params.filter(([k]) => k === "alt").flatMap(([, v]) => v.split(/\s+/));
  const addresses = [...new Set([m[1], ...alternatives.filter((a) => a !== "")])];
  return { addresses, code, fingerprint };
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
    /** With a typed code: the gateway's certificate fingerprint, as `readPairing` takes it. */
    fingerprint?: string;
    /** `https://` and `wss://`: only with a `fetch` that checks the gateway's certificate (a pinning one). */
    tls?: boolean;
  },
): Promise<Paired> {
  const { addresses, code, fingerprint } = readPairing(input, options);
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
        fingerprint: typeof body.fingerprint === "string" ? body.fingerprint : fingerprint,
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
