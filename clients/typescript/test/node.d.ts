/*
 * The few Node.js APIs the tests use, declared by hand: Debian ships no @types/node, and the library itself must
 * type-check without Node. Signatures follow the Node 20 documentation, narrowed to what the tests call.
 */

declare var process: {
  env: { [key: string]: string | undefined };
  pid: number;
  execPath: string;
  argv: string[];
  cwd(): string;
  exit(code?: number): never;
  kill(pid: number, signal?: string | number): boolean;
  on(event: string, listener: (...args: any[]) => void): void;
};

declare function setTimeout(callback: (...args: any[]) => void, ms?: number): any;
declare function clearTimeout(handle: any): void;
declare function setImmediate(callback: () => void): any;

declare class URL {
  constructor(url: string, base?: string);
  readonly href: string;
}

interface ImportMeta {
  url: string;
}

declare function fetch(
  url: string,
  init?: { method?: string; headers?: { [key: string]: string }; body?: string },
): Promise<{ status: number; ok: boolean; json(): Promise<any>; text(): Promise<string> }>;

interface NodeBuffer extends Uint8Array {
  toString(encoding?: string): string;
}

declare module "node:child_process" {
  interface ChildProcess {
    pid?: number;
    exitCode: number | null;
    signalCode: string | null;
    kill(signal?: string): boolean;
    once(event: "exit", listener: (code: number | null, signal: string | null) => void): void;
  }
  function spawn(command: string, args: string[], options?: { stdio?: any; env?: any; cwd?: string }): ChildProcess;
  function spawnSync(command: string, args: string[], options?: { encoding?: string; cwd?: string }): { status: number | null; stdout: string; stderr: string };
}

declare module "node:fs" {
  function mkdtempSync(prefix: string): string;
  function mkdirSync(path: string, options?: { recursive?: boolean }): void;
  function writeFileSync(path: string, data: string): void;
  function readFileSync(path: string, encoding: "utf8"): string;
  function readdirSync(path: string): string[];
  function rmSync(path: string, options?: { recursive?: boolean; force?: boolean }): void;
  function existsSync(path: string): boolean;
  function openSync(path: string, flags: string): number;
  function closeSync(fd: number): void;
  function copyFileSync(from: string, to: string): void;
}

declare module "node:os" {
  function tmpdir(): string;
}

declare module "node:path" {
  function join(...parts: string[]): string;
  function resolve(...parts: string[]): string;
  function dirname(path: string): string;
  function basename(path: string, ext?: string): string;
}

declare module "node:url" {
  function fileURLToPath(url: string): string;
  function pathToFileURL(path: string): { href: string };
}

declare module "node:module" {
  function register(specifier: string, parentURL?: string): void;
}

declare module "node:net" {
  interface Socket {
    write(data: Uint8Array | string): boolean;
    pipe(destination: Socket): Socket;
    destroy(): void;
    on(event: "data", listener: (chunk: NodeBuffer) => void): Socket;
    on(event: "error" | "close" | "connect", listener: (...args: any[]) => void): Socket;
    setNoDelay(noDelay?: boolean): Socket;
  }
  interface Server {
    listen(port: number, host: string, callback?: () => void): Server;
    address(): { port: number; address: string };
    close(callback?: () => void): void;
    on(event: "error", listener: (error: unknown) => void): Server;
  }
  function createServer(listener: (socket: Socket) => void): Server;
  function connect(port: number, host: string): Socket;
}
