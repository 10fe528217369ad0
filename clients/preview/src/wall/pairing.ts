import { parsePairingURL } from "../../../typescript/src/pairing.js";
import { api } from "../common/api.js";

/**
 * Pairing a screen: the live preview's Devices panel shows a pairing URL (as a QR code) and a short code; the
 * wall view takes either and redeems it at its own gateway (`POST /v1/pair {"code"}` → `{device_id, token}`).
 *
 * Pairing URL (docs/CLIENTS.md): `lanpush://HOST:PORT/pair?code=CODE[&fp=SHA256][&alt=HOST:PORT]…`. The page was
 * served by the gateway, so it redeems at its own origin; HOST, `alt` and `fp` are for native clients.
 */
/** What the user typed or scanned: a pairing URL, or the short code (`ABCD-EFGH`, any case, spaces ignored). */
export function codeOf(input: string): string {
  const url = parsePairingURL(input);
  return url ? url.code : input.trim();
}

export type Redeemed = { ok: true; device: string; token: string } | { ok: false; message: string };

export async function redeem(input: string): Promise<Redeemed> {
  const code = codeOf(input);
  if (!code) return { ok: false, message: "Type the short code or paste the pairing URL." };
  try {
    const { status, data } = await api("POST", "/v1/pair", null, { code });
    if (status === 200 && data && typeof data.token === "string") return { ok: true, device: String(data.device_id), token: data.token };
    if (status === 429) return { ok: false, message: data?.message ?? "Too many attempts: wait a minute and try again." };
    if (status === 403) return { ok: false, message: "That code is unknown, already used or expired: make a new one in the preview." };
    return { ok: false, message: data?.message ?? `The gateway answered ${status}.` };
  } catch (e) {
    return { ok: false, message: `The gateway did not answer: ${(e as Error).message}` };
  }
}
