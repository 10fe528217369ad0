import { Button, List, Navigation, NavigationStack, SecureField, Section, Text, TextField, useEffect, useState, VirtualNode } from "scripting";
import { titleOf } from "../../typescript/src/liveActivityRules";
import type { App } from "./app";
import { maskedToken } from "./storage";

/** The gateway's `session.ping_timeout` by default: how long after a missed ping it gives a session up. */
const PING_TIMEOUT = 10;

function statusText(app: App): string {
  switch (app.status) {
    case "live": return "Live";
    case "auth_rejected": return "Token rejected";
    case "connecting": return "Connecting…";
    case "offline": return "Offline, retrying";
    case "stopped": return "Stopped";
    default: return "Pair this phone, or enter the gateway and a device token";
  }
}

/** What happens when Scripting leaves the screen: the part of the README's "Keep it running" this phone is in. */
function keeperText(app: App): { text: string; warn: boolean } | null {
  switch (app.keeper) {
    case "active":
      return { text: "Running in the background: updates reach the Lock Screen while Scripting is closed", warn: false };
    case "ended":
      return { text: "iOS ended the background time: updates froze until Scripting came back; asked again", warn: true };
    case "refused":
      return {
        text: `${app.pro ? "iOS refused background time" : "Background time needs Scripting Pro"}: once you leave Scripting, ` +
          "the Live Activities freeze (timers keep running) until you open it again, and lanpush counts the phone gone",
        warn: true,
      };
    default:
      return null;
  }
}

/**
 * The script's page. Swiping it down minimizes the script (it keeps running and mirroring; Scripting's running
 * scripts list brings the page back); **Stop** ends the Live Activities and the script.
 */
export function Page({ app, onStop }: { app: App; onStop: () => void }): VirtualNode {
  const [, redraw] = useState(0);
  const [code, setCode] = useState("");
  const dismiss = Navigation.useDismiss();
  useEffect(() => app.subscribe(() => redraw((n) => n + 1)), []);
  const status = statusText(app);
  const keeper = keeperText(app);
  const stop = async () => {
    await app.shutdown();
    onStop();
    dismiss();
  };
  const scan = async () => {
    const scanned = await QRCode.scan();
    if (scanned && (await app.pair(scanned))) setCode("");
  };
  const typedPair = async () => {
    if (await app.pair(code)) setCode("");
  };
  const editDraft = (change: Partial<typeof app.draft>) => {
    app.draft = { ...app.draft, ...change };
    redraw((n) => n + 1);
  };
  return (
    <NavigationStack>
      <List navigationTitle="lanpush">
        <Section title="Status">
          <Text>{app.detail ? `${status} (${app.detail})` : status}</Text>
          {app.keepalive !== null ? (
            <Text foregroundStyle="secondaryLabel">{`Keepalive ${app.keepalive} s: lanpush counts this phone gone about ${app.keepalive + PING_TIMEOUT} s after it goes silent`}</Text>
          ) : null}
          {keeper ? <Text foregroundStyle={keeper.warn ? "systemOrange" : "secondaryLabel"}>{keeper.text}</Text> : null}
          {app.activitiesEnabled === false ? (
            <Text foregroundStyle="systemRed">Live Activities are off for Scripting: turn them on in iOS Settings → Scripting → Live Activities</Text>
          ) : null}
          {app.refused.length > 0 ? (
            <Text foregroundStyle="systemOrange">{`Not on the Lock Screen yet (iOS refused to start it; tried again on its next update): ${app.refused.join(", ")}`}</Text>
          ) : null}
          {app.cut.map(([tag, fields]) => (
            <Text key={`cut-${tag}`} foregroundStyle="systemOrange">{`${tag}: shortened to fit a Live Activity's 4 KB (${fields.join(", ")})`}</Text>
          ))}
        </Section>
        <Section title="Live Activities">
          {app.activities.length === 0 ? <Text foregroundStyle="secondaryLabel">None</Text> : null}
          {app.activities.map((a) => (
            <Text key={a.tag}>{`${titleOf(a)}${a.state.message ? ` · ${a.state.message}` : ""}${a.phase === "ended" ? " (ended)" : ""}`}</Text>
          ))}
        </Section>
        <Section title={app.notificationsDelivered ? "Notifications (also delivered)" : "Notifications"}>
          {app.notifications.map((n) => (
            <Text key={n.seq}>{[n.title, n.message].filter((s) => s).join(": ")}</Text>
          ))}
        </Section>
        <Section title="Pair">
          <Button title="Scan the pairing QR code" systemImage="qrcode.viewfinder" action={() => void scan()} />
          <TextField title="Pairing URL or short code" prompt="lanpush://… or ABCD-EFGH (with the URL below)" value={code} onChanged={setCode} />
          <Button title="Pair" systemImage="link" action={() => void typedPair()} />
          {app.pairing ? <Text>{app.pairing}</Text> : null}
        </Section>
        <Section title="Gateway">
          <TextField title="URL" prompt="192.168.1.5:8765" value={app.draft.url} onChanged={(url) => editDraft({ url })} />
          <SecureField title="Device token" prompt={`saved: ${maskedToken(app.settings.token)}`} value={app.draft.token} onChanged={(token) => editDraft({ token })} />
          <Button title="Connect" systemImage="bolt.horizontal" action={() => void app.use({ url: app.draft.url, token: app.draft.token || app.settings.token })} />
        </Section>
        <Section title="Stop">
          <Text foregroundStyle="secondaryLabel">Swipe this page down to keep lanpush running; Stop ends its Live Activities and the script.</Text>
          <Button title="Stop" systemImage="stop.circle" role="destructive" action={() => void stop()} />
        </Section>
      </List>
    </NavigationStack>
  );
}
