/** The gateway's HTTP API, same origin (the pages are served by lanpushd itself). */
export interface Answer {
  status: number;
  /** The JSON answer (null when none): the API's own shapes, read where used. */
  data: any;
}

export async function api(method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
  const headers: { [k: string]: string } = {};
  if (token) headers.Authorization = "Bearer " + token;
  const init: RequestInit = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  let data = null;
  try {
    data = await r.json();
  } catch {
    data = null;
  }
  return { status: r.status, data };
}

/** `ws://` or `wss://` to this page's gateway. */
export function streamURL(): string {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/stream";
}
