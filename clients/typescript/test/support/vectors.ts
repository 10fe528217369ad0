import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { DeviceState } from "../../src/state.js";

/** One step of a protocol vector (docs/CLIENTS.md, "Protocol vectors"). */
export type VectorStep =
  | { now: number; subscribe: { type: "subscribe"; epoch?: string; seq?: number } }
  | { now: number; frame: any; state: DeviceState; ack: number | null };

export interface Vector {
  format: number;
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

export function loadVectors(): Vector[] {
  const dir = join(repoRoot(), "Tests", "Fixtures", "protocol");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Vector);
}
