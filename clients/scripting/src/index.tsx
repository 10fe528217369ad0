import { Button, List, Navigation, NavigationStack, Script, Section, Text, TextField, useEffect, useState, VirtualNode } from "scripting";
import { App } from "./app";
import { loadSettings, saveSettings } from "./storage";

/**
 * lanpush for the Scripting app: mirrors the Live Activities of one lanpush device into real iOS Live
 * Activities while the script runs. Settings (gateway URL, device token) live in the script's Storage.
 */
function Page({ app }: { app: App }): VirtualNode {
  const [, redraw] = useState(0);
  const [url, setUrl] = useState(app.settings.url);
  const [token, setToken] = useState(app.settings.token);
  useEffect(() => app.subscribe(() => redraw((n) => n + 1)), []);
  const connect = () => {
    saveSettings({ url, token });
    app.settings = loadSettings();
    void app.start();
  };
  const status = app.status === "live" ? "Live" : app.status === "auth_rejected" ? "Token rejected" : app.status === "connecting" ? "Connecting…" : app.status === "offline" ? "Offline, retrying" : "Enter the gateway and a device token";
  return (
    <NavigationStack>
      <List navigationTitle="lanpush">
        <Section title="Gateway">
          <TextField title="URL" prompt="ws://192.168.1.5:8765" value={url} onChanged={setUrl} />
          <TextField title="Device token" prompt="from Config/lanpush.yaml" value={token} onChanged={setToken} />
          <Button title="Connect" systemImage="bolt.horizontal" action={connect} />
        </Section>
        <Section title="Status">
          <Text>{app.detail ? `${status} (${app.detail})` : status}</Text>
          {app.keepAlive === false ? <Text foregroundStyle="systemOrange">Background keep-alive was refused: keep the app open</Text> : null}
        </Section>
        <Section title="Live Activities">
          {app.activities.length === 0 ? <Text foregroundStyle="secondaryLabel">None</Text> : null}
          {app.activities.map((a) => (
            <Text key={a.tag}>{`${a.attributes.title}${a.state.message ? ` · ${a.state.message}` : ""}${a.phase === "ended" ? " (ended)" : ""}`}</Text>
          ))}
        </Section>
        <Section title={app.notificationsDelivered ? "Notifications (also delivered)" : "Notifications"}>
          {app.notifications.map((n) => (
            <Text key={n.seq}>{[n.title, n.message].filter((s) => s).join(": ")}</Text>
          ))}
        </Section>
      </List>
    </NavigationStack>
  );
}

async function main(): Promise<void> {
  // Live Activities need the main app: the widget and Live Activity extensions only render.
  if (Script.env !== "index") return;
  const app = new App(loadSettings());
  if (app.configured) await app.start();
  await Navigation.present({ element: <Page app={app} /> });
  // The page was closed: the script stops, and with it its Live Activities.
  await app.stop();
  await BackgroundKeeper.stopKeepAlive();
  Script.exit();
}

void main();
