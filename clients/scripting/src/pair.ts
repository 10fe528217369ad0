import { fetch } from "scripting";
import { PairingError, redeemPairing } from "../../typescript/src/pairing";
import type { Settings } from "./storage";

/**
 * Pairs this phone from a pairing URL — scanned with the in-script scanner, carried in the Scripting run URL the
 * iPhone's Camera opened (`lanpush pair --scripting`, the preview's pairing panel), or pasted — or from a short code
 * typed with the gateway's address: the code is redeemed once for the device's token. Plain HTTP: the app's `fetch`
 * cannot pin the gateway's self-signed certificate (see the library's pairing module).
 */
export async function pairDevice(input: string, address: string): Promise<Settings> {
  const paired = await redeemPairing(input, {
    address: address.trim() || undefined,
    fetch: (url, init) => fetch(url, { ...init, timeout: 10 }),
  });
  return { url: paired.address, token: paired.token };
}

/** A sentence for the page. */
export function pairingFailure(error: unknown): string {
  if (error instanceof PairingError) {
    if (error.status === 403) return "That code is unknown, already used or expired: make a new one on the gateway.";
    if (error.status === 429) return `Too many attempts: try again in ${error.retryAfter ?? 60} s.`;
    return error.message;
  }
  return String(error);
}
