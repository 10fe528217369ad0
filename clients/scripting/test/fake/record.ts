/** Every call the script made into the fake app, in order (cleared at each run). */
export const calls: { api: string; args: any[] }[] = [];

export function record(api: string, ...args: any[]): void {
  calls.push({ api, args });
}
