import { Button, List, Navigation, NavigationStack, Script, Section, Text, TextField, useEffect, useState, VirtualNode } from "scripting";
import { App } from "./app";
import { pairDevice, pairingFailure } from "./pair";
import { loadSettings, saveSettings, Settings } from "./storage";

/**
 * lanpush for the Scripting app: mirrors the Live Activities of one lanpush device into real iOS Live
 * Activities while the script runs. Settings (gateway URL, device token) come from pairing or are typed, and live in
 * the script's Storage.
 */
function Page({ app }: { app: App }): VirtualNode {
  const [, redraw] = useState(0);
  const [url, setUrl] = useState(app.settings.url);
  const [token, setToken] = useState(app.settings.token);
  const [code, setCode] = useState("");
  const [pairing, setPairing] = useState("");
  useEffect(() => app.subscribe(() => redraw((n) => n + 1)), []);
  const use = (settings: Settings) => {
    saveSettings(settings);
    app.settings = loadSettings();
    setUrl(app.settings.url);
    setToken(app.settings.token);
    void app.start();
  };
  const connect = () => use({ url, token });
  const pair = async (input: string) => {
    setPairing("Pairing…");
    try {
      use(await pairDevice(input, url));
      setCode("");
      setPairing("");
    } catch (e) {
      setPairing(pairingFailure(e));
    }
  };
  const scan = async () => {
    const scanned = await QRCode.scan();
    if (scanned) await pair(scanned);
  };
  const status = app.status === "live" ? "Live" : app.status === "auth_rejected" ? "Token rejected" : app.status === "connecting" ? "Connecting…" : app.status === "offline" ? "Offline, retrying" : "Pair this phone, or enter the gateway and a device token";
  return (
    <NavigationStack>
      <List navigationTitle="lanpush">
        <Section title="Pair">
          <Button title="Scan the pairing QR code" systemImage="qrcode.viewfinder" action={() => void scan()} />
          <TextField title="Pairing URL or short code" prompt="lanpush://… or ABCD-EFGH (with the URL below)" value={code} onChanged={setCode} />
          <Button title="Pair" systemImage="link" action={() => void pair(code)} />
          {pairing ? <Text>{pairing}</Text> : null}
        </Section>
        <Section title="Gateway">
          <TextField title="URL" prompt="ws://192.168.1.5:8765" value={url} onChanged={setUrl} />
          <TextField title="Device token" prompt="set by pairing, or from lanpush device add" value={token} onChanged={setToken} />
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
