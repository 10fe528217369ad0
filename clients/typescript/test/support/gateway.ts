import { ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { LanpushClient } from "../../src/client.js";
import { sleep } from "./fakes.js";
import { repoRoot } from "./vectors.js";

/** The daemon under test: `$LANPUSHD`, else the debug build of this checkout. */
export function lanpushdPath(): string {
  return process.env.LANPUSHD ?? join(repoRoot(), ".build", "debug", "lanpushd");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer(() => {});
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = server.address().port;
      server.close(() => resolve(port));
    });
  });
}

function token(): string {
  let t = "";
  for (let i = 0; i < 32; i++) t += "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 36)];
  return t;
}

export interface GatewayOptions {
  devices?: string[];
  session?: { [key: string]: number };
  /** More top-level config lines, as YAML (`tls: {enabled: true}`). */
  extra?: string[];
}

/**
 * One lanpushd on loopback with its own config and state folder, as `Tests/integration/gateway.py` starts it:
 * `lanpushd --config FILE --state-dir DIR`, mDNS off, one token per device.
 */
export class Gateway {
  readonly dir = mkdtempSync(join(tmpdir(), "lanpush-ts-"));
  readonly admin = token();
  readonly tokens: { [device: string]: string } = {};
  port = 0;
  private proc: ChildProcess | null = null;

  constructor(private readonly options: GatewayOptions = {}) {
    for (const d of options.devices ?? ["phone", "tablet"]) this.tokens[d] = token();
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/v1/stream`;
  }

  async start(): Promise<this> {
    if (this.port === 0) this.port = await freePort();
    const lines = [
      `listen: "127.0.0.1:${this.port}"`,
      `admin_token: ${this.admin}`,
      "log_level: debug",
      "mdns: {enabled: false}",
      "devices:",
      ...Object.entries(this.tokens).map(([d, t]) => `  - {id: ${d}, name: ${d}, token: ${t}}`),
    ];
    if (this.options.session) lines.push(`session: ${JSON.stringify(this.options.session)}`);
    lines.push(...(this.options.extra ?? []));
    writeFileSync(join(this.dir, "lanpush.yaml"), lines.join("\n") + "\n");
    const log = openSync(join(this.dir, "lanpushd.log"), "a");
    this.proc = spawn(lanpushdPath(), ["--config", join(this.dir, "lanpush.yaml"), "--state-dir", join(this.dir, "state")], {
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error(`lanpushd exited: ${this.log()}`);
      try {
        if ((await fetch(`http://127.0.0.1:${this.port}/healthz`)).status === 200) return this;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    throw new Error(`lanpushd did not start: ${this.log()}`);
  }

  /** SIGTERM (a clean stop: sessions get 1001, the epoch survives) or SIGKILL (a new epoch on restart). */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill(signal);
    await Promise.race([exited, sleep(5000)]);
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL");
      await exited;
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  log(): string {
    const file = join(this.dir, "lanpushd.log");
    return existsSync(file) ? readFileSync(file, "utf8").slice(-4000) : "";
  }

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const r = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.admin}`, "Content-Type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  }

  /** Notify service data, as HA's `rest_command` or `curl` posts it to one device. */
  async push(device: string, payload: { title?: string; message: string; data?: object }): Promise<void> {
    const r = await this.request("POST", "/v1/push", { targets: [device], ...payload });
    if (r.status !== 202) throw new Error(`push failed: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /** `GET /v1/activities?device=`: the gateway's own picture, by tag. */
  async activities(device: string): Promise<{ [tag: string]: any }> {
    const r = await this.request("GET", `/v1/activities?device=${device}`);
    const out: { [tag: string]: any } = {};
    for (const a of r.body.activities) out[a.tag] = a;
    return out;
  }
}

/** The gateways and clients one test file starts: the clients stopped, the gateways stopped and removed, after its tests. */
export class Fleet {
  private readonly gateways: Gateway[] = [];
  private readonly clients: LanpushClient[] = [];

  constructor() {
    after(async () => {
      for (const c of this.clients) await c.stop();
      for (const g of this.gateways) await g.dispose();
    });
  }

  async gateway(options: GatewayOptions = {}): Promise<Gateway> {
    const gw = await new Gateway(options).start();
    this.gateways.push(gw);
    return gw;
  }

  client(c: LanpushClient): LanpushClient {
    this.clients.push(c);
    return c;
  }
}

/** The fields a client holds, from a `GET /v1/activities` entry (which adds bookkeeping such as `updated_at`). */
export function clientView(a: any): object {
  const view: any = { tag: a.tag, attributes: a.attributes, state: a.state, phase: a.phase };
  for (const key of ["stale_date", "relevance_score", "dismissal_date"]) if (a[key] !== undefined) view[key] = a[key];
  return view;
}

/** Polls until `check` holds (or throws its last failure). */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}
