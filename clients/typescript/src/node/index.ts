// The library for Node.js: everything the main entry has, and pinning to a gateway's own certificate. One bundle,
// so `instanceof PairingError` holds whichever function threw it.
export * from "../index.js";
export { FingerprintMismatchError, fingerprintOf, normalizeFingerprint, PinnedAgent, pinnedFetch, pinnedSocketFactory, redeemPinnedPairing } from "./pinning.js";
export type { WsConstructor } from "./pinning.js";
