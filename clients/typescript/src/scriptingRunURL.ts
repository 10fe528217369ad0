/**
 * A pairing the iPhone's Camera can open: no app on an iPhone opens `lanpush://`, but the Scripting app opens its
 * run URL (`scripting://run/SCRIPT?key=value`, its "Script" docs: `Script.createRunURLScheme`) and hands the query to
 * the script as `Script.queryParameters` — to a running instance as a resume (its "Minimize and resume" docs). The
 * whole pairing URL travels in one parameter, `pair`, so the script reads it with the same parser as a scanned one.
 *
 *     scripting://run/lanpush?pair=lanpush%3A%2F%2F192.168.1.5%3A8765%2Fpair%3Fcode%3D…
 *
 * Every character outside RFC 3986's unreserved set is percent-encoded (as `encodeURIComponent` does): the pairing
 * URL's own `?`, `&` and `=` stay inside the one value whichever way the app splits the query. The Swift twin is
 * LanpushClient's `ScriptingRunURL`; `lanpush pair --scripting` prints it.
 */
export const SCRIPTING_PAIR_PARAMETER = "pair";

/** The name the set-up guide gives the script. */
export const DEFAULT_SCRIPT_NAME = "lanpush";

export function scriptingRunURL(pairingURL: string, scriptName: string = DEFAULT_SCRIPT_NAME): string {
  return `scripting://run/${encodeURIComponent(scriptName)}?${SCRIPTING_PAIR_PARAMETER}=${encodeURIComponent(pairingURL)}`;
}

/** The pairing URL in a run URL's query parameters (`Script.queryParameters`), or null when there is none. */
export function pairingFromQuery(parameters: { [key: string]: unknown } | null | undefined): string | null {
  const value = parameters?.[SCRIPTING_PAIR_PARAMETER];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}
