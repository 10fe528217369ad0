/**
 * Loaded before every test file (`node --import`): Node 20 has the WHATWG WebSocket behind
 * `--experimental-websocket` (22 has it built in); an older Node gets Debian's `ws` package, which implements the
 * same interface.
 */
const g = globalThis as unknown as { WebSocket?: unknown };
if (!g.WebSocket) {
  const path = "/usr/share/nodejs/ws/index.js";
  const ws: { default: unknown } = await import(path);
  g.WebSocket = ws.default;
}
export {};
