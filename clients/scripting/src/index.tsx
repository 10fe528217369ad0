import { Navigation, Script } from "scripting";
import { pairingFromQuery } from "../../typescript/src/scriptingRunURL";
import { App } from "./app";
import { Page } from "./page";
import { loadSettings } from "./storage";

/**
 * lanpush for the Scripting app: mirrors the Live Activities of one lanpush device into real iOS Live Activities
 * while the script runs. The script keeps running with its page swiped away (minimized); only **Stop** ends it.
 * Run again while running — from the app, a notification's tap, or the pairing QR code the iPhone's Camera opened —
 * it resumes: the page comes back, and a pairing in the run URL is redeemed.
 */
async function main(): Promise<void> {
  // Live Activities need the main app: the widget and Live Activity extensions only render.
  if (Script.env !== "index") return;
  const app = new App(loadSettings());
  let stopped = false;
  let shown = false;
  const present = async () => {
    shown = true;
    await Navigation.present({ element: <Page app={app} onStop={() => (stopped = true)} /> });
    shown = false;
    // Stop: the script ends. Without minimizing (Scripting's multiple windows mode) closing the page leaves the
    // script running, and the next run brings the page back.
    if (stopped) Script.exit();
  };
  if (Script.supportsMinimization()) Script.enableMinimize(true);
  Script.onResume((details) => {
    const pairing = pairingFromQuery(details.queryParameters);
    if (pairing) void app.pair(pairing);
    void app.resumed();
    if (!shown && !stopped) void present();
  });
  const pairing = pairingFromQuery(Script.queryParameters);
  if (pairing) void app.pair(pairing);
  else if (app.configured) await app.start();
  await present();
}

void main();
