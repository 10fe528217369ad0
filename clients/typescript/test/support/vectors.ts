import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { DeviceState } from "../../src/state.js";

/** One step of a protocol vector (docs/CLIENTS.md, "Protocol vectors"). */
export type VectorStep =
  | { now: number; subscribe: { type: "subscribe"; epoch?: string; seq?: number } }
  | { now: number; frame: any; state: DeviceState; ack: number | null };

export interface Vector {
  format: number;
  /** `lanpush.v2` in the v2 set (its activity frames are arrays); absent in the v1 set. */
  protocol?: string;
  name: string;
  description: string;
  initial: DeviceState;
  steps: VectorStep[];
}

/** The repository root, from this file's place in `clients/typescript/.build-test/test/support`. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (readdirSync(dir).includes("Package.swift")) return dir;
    dir = resolve(dir, "..");
  }
  throw new Error("cannot find the repository root");
}

/**
 * The recorded vectors: `v1` (`Tests/Fixtures/protocol`) or `v2` (its `v2` folder: the same scenarios in lanpush.v2's
 * frames). A missing folder gives none, so the test that counts them fails instead of the whole file.
 */
export function loadVectors(set: "v1" | "v2" = "v1"): Vector[] {
  const base = join(repoRoot(), "Tests", "Fixtures", "protocol");
  const dir = set === "v1" ? base : join(base, "v2");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Vector);
}

/** One of the client rules' vectors (`Tests/Fixtures/protocol/client/NAME.json`, docs/CLIENTS.md "Protocol vectors"). */
export function loadClientVector<T>(name: "close-codes" | "pairing" | "acks"): { format: number; name: string; description: string } & T {
  const file = join(repoRoot(), "Tests", "Fixtures", "protocol", "client", `${name}.json`);
  const vector = JSON.parse(readFileSync(file, "utf8"));
  if (vector.format !== 1 || vector.name !== name) throw new Error(`${file}: format ${vector.format}, name ${vector.name}`);
  return vector;
}
