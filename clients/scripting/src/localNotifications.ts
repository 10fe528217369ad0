import { Notification, Script } from "scripting";
import type { LanpushClient } from "../../typescript/src/client";
import { tapTarget } from "../../typescript/src/liveActivityRules";
import type { HeldNotification } from "../../typescript/src/state";

type ScheduleOptions = Parameters<typeof Notification.schedule>[0];

/**
 * Plain notifications as local notifications from Scripting, removed again by a `clear_notification` with their
 * tag. A tap opens the notification's `url` as Home Assistant's apps do (a web address as itself, an HA path in the
 * companion app); without one it goes back to this script through its run URL, which a running instance receives
 * as a resume (the app's "Minimize and resume" docs) — the app's default tap action runs the script again, which
 * would start a second client beside the running one.
 */
export class LocalNotifications {
  /** False once scheduling a local notification failed: the page then lists them instead. */
  delivered = true;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly client: LanpushClient) {}

  attach(): void {
    this.unsubscribe.push(
      this.client.on("notification", (e) => this.notify(e.notification)),
      this.client.on("clear", (e) => this.clear(e.tag)),
    );
  }

  detach(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  private async notify(n: HeldNotification): Promise<void> {
    const data = n.data as { tag?: unknown; group?: unknown; url?: unknown; silent?: unknown };
    const tap = tapTarget(data.url);
    const options: ScheduleOptions = {
      title: n.title ?? "Home Assistant",
      userInfo: { lanpush_seq: n.seq, ...(typeof data.tag === "string" ? { tag: data.tag } : {}) },
      tapAction: { type: "openURL", url: tap ? tap.href : Script.createRunURLScheme(Script.name) },
    };
    if (n.message !== undefined) options.body = n.message;
    if (typeof data.group === "string") options.threadIdentifier = data.group;
    if (data.silent === true) options.silent = true;
    try {
      if (!(await Notification.schedule(options))) this.delivered = false;
    } catch {
      this.delivered = false;
    }
  }

  private async clear(tag: string): Promise<void> {
    try {
      const delivered = await Notification.getAllDeliveredsOfCurrentScript();
      const ids = delivered.filter((d) => d.request.content.userInfo?.tag === tag).map((d) => d.request.identifier);
      if (ids.length > 0) await Notification.removeDelivereds(ids);
    } catch {
      // Nothing delivered to clear (or no permission): the page's list is cleared by the client state anyway.
    }
  }
}
