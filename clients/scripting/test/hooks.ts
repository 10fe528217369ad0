/**
 * Node module hooks that let the committed bundle run as the Scripting app would run it: `import ... from
 * "scripting"` gets the fake, `./live_activity` is the sibling `.tsx` file, and `.tsx` files (the bundle is
 * plain JavaScript with a `.tsx` name, as the app wants it) load as ES modules. Each run of the script
 * (`index.tsx?run=N`) gets that run's own `setTimeout`, `clearTimeout` and `WebSocket`, as each script instance in
 * the app has its own JavaScript context: killing the app ends them (fake/runtime.ts).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const FAKE = new URL("./fakeScripting.js", import.meta.url).href;

type Resolve = (specifier: string, context: { parentURL?: string }) => Promise<{ url: string; format?: string }>;
type Load = (url: string, context: object) => Promise<{ format: string; source?: string }>;

export async function resolve(specifier: string, context: { parentURL?: string }, next: Resolve) {
  if (specifier === "scripting") return { url: FAKE, shortCircuit: true };
  if (specifier === "./live_activity" && context.parentURL?.split("?")[0].endsWith(".tsx")) {
    return { url: new URL("./live_activity.tsx", context.parentURL).href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url: string, context: object, next: Load) {
  if (url.split("?")[0].endsWith(".tsx")) {
    const source = readFileSync(fileURLToPath(url.split("?")[0]), "utf8");
    const run = /[?&]run=(\d+)/.exec(url);
    const prelude = run ? `const { setTimeout, clearTimeout, WebSocket } = globalThis.__scriptingRun(${run[1]});\n` : "";
    return { format: "module", source: prelude + source, shortCircuit: true };
  }
  return next(url, context);
}
