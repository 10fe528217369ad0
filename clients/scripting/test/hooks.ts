/**
 * Node module hooks that let the committed bundle run as the Scripting app would run it: `import ... from
 * "scripting"` gets the fake, `./live_activity` is the sibling `.tsx` file, and `.tsx` files (the bundle is
 * plain JavaScript with a `.tsx` name, as the app wants it) load as ES modules.
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
    return { format: "module", source: readFileSync(fileURLToPath(url.split("?")[0]), "utf8"), shortCircuit: true };
  }
  return next(url, context);
}
