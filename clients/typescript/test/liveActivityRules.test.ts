import assert from "node:assert/strict";
import { test } from "node:test";
import {
  appStaleDate, barDirection, barFill, chronometerOf, percentText, progressOf, roundedInteger, tapTarget, timerBar, titleOf,
} from "../src/liveActivityRules.js";

const NOW = 1_700_000_000_000;

test("progress is rounded as the iOS app decodes it: halves away from zero, non-numbers absent", () => {
  assert.equal(roundedInteger(20.5), 21);
  assert.equal(roundedInteger(20.4999), 20);
  assert.equal(roundedInteger(-2.5), -3, "Swift's rounded() takes halves away from zero; Math.round would give -2");
  assert.equal(roundedInteger(-0.4), 0);
  assert.equal(roundedInteger("50"), undefined);
  assert.equal(roundedInteger(Number.NaN), undefined);
  assert.deepEqual(progressOf({ progress: 20.5, progress_max: 40.4 }), { progress: 21, max: 40, fraction: 21 / 40 });
  assert.equal(progressOf({ progress: 1, progress_max: 0.4 }), null, "progress_max rounding to 0 draws no bar");
  assert.equal(progressOf({ progress: "unavailable", progress_max: 100 }), null);
  assert.equal(progressOf({ progress: 5 }), null);
});

test("the percentage clamps and rounds the fraction", () => {
  assert.equal(percentText(0.125), "13%");
  assert.equal(percentText(1.7), "100%");
  assert.equal(percentText(-0.2), "0%");
  assert.equal(percentText(2 / 3), "67%");
});

test("progress_bar_direction: increasing or decreasing, any case; decreasing drains the bar, not the percentage", () => {
  assert.equal(barDirection({ progress_bar_direction: "Decreasing" }), "decreasing");
  assert.equal(barDirection({ progress_bar_direction: "rtl" }), null, "unrecognised values keep the default");
  assert.equal(barFill({ progress: 30, progress_max: 100 }), 0.3);
  assert.equal(barFill({ progress: 30, progress_max: 100, progress_bar_direction: "decreasing" }), 0.7);
  assert.equal(barFill({ progress: 130, progress_max: 100, progress_bar_direction: "decreasing" }), 0);
  assert.equal(barFill({ message: "no bar" }), null);
});

test("the title in the content state replaces the start's, unless empty", () => {
  const attributes = { tag: "t", title: "Washer", started_at: 1 };
  assert.equal(titleOf({ attributes, state: { message: "", title: "Dryer" } }), "Dryer");
  assert.equal(titleOf({ attributes, state: { message: "", title: "" } }), "Washer");
  assert.equal(titleOf({ attributes, state: { message: "" } }), "Washer");
});

test("chronometer: down to a future end, up from a past one, bounded with chronometer_start", () => {
  const end = NOW / 1000 + 60;
  assert.deepEqual(chronometerOf({ chronometer: true, countdown_end: end }, NOW), { kind: "countdown", end: end * 1000 });
  assert.deepEqual(chronometerOf({ chronometer: true, countdown_end: end }, NOW + 61_000), { kind: "countup", since: end * 1000 });
  assert.deepEqual(chronometerOf({ chronometer: true, countdown_end: end, chronometer_start: NOW / 1000 }, NOW + 90_000),
    { kind: "bounded", start: NOW, end: end * 1000 });
  assert.equal(chronometerOf({ chronometer: false, countdown_end: end }, NOW), null);
  assert.equal(chronometerOf({ chronometer: true }, NOW), null);
});

test("the timer's bar: a countdown drains, a bounded count-up fills, an unbounded count-up has none", () => {
  const end = NOW / 1000 + 100;
  assert.deepEqual(timerBar({ chronometer: true, countdown_end: end }, NOW + 25_000, NOW),
    { from: NOW, to: end * 1000, drains: true, fill: 0.75 });
  assert.deepEqual(timerBar({ chronometer: true, countdown_end: end, progress_bar_direction: "increasing" }, NOW + 25_000, NOW),
    { from: NOW, to: end * 1000, drains: false, fill: 0.25 });
  const bounded = { chronometer: true, countdown_end: end, chronometer_start: NOW / 1000 };
  assert.deepEqual(timerBar(bounded, NOW + 40_000, NOW), { from: NOW, to: end * 1000, drains: false, fill: 0.4 });
  assert.deepEqual(timerBar({ ...bounded, progress_bar_direction: "decreasing" }, NOW + 40_000, NOW),
    { from: NOW, to: end * 1000, drains: true, fill: 0.6 });
  assert.equal(timerBar({ chronometer: true, countdown_end: NOW / 1000 - 5 }, NOW, NOW), null, "counting up: no bar");
  assert.equal(timerBar({ chronometer: true, countdown_end: end, progress: 1, progress_max: 2 }, NOW, NOW), null,
    "a static bar wins over the timer's");
});

test("the app's stale date: a chronometer's end + 2 s (not before now + 2 s), else 30 minutes after the update", () => {
  assert.equal(appStaleDate({ chronometer: true, countdown_end: NOW / 1000 + 60 }, NOW), NOW + 62_000);
  assert.equal(appStaleDate({ chronometer: true, countdown_end: NOW / 1000 - 60 }, NOW), NOW + 2_000);
  assert.equal(appStaleDate({ message: "x" }, NOW), NOW + 30 * 60_000);
});

test("a tap opens a URL as itself, and a Home Assistant path through the companion app's navigate link", () => {
  assert.deepEqual(tapTarget("https://example.com/x"), { kind: "url", raw: "https://example.com/x", href: "https://example.com/x" });
  assert.deepEqual(tapTarget("/lovelace/laundry"), { kind: "path", raw: "/lovelace/laundry", href: "homeassistant://navigate/lovelace/laundry" });
  assert.deepEqual(tapTarget("lovelace/0"), { kind: "path", raw: "lovelace/0", href: "homeassistant://navigate/lovelace/0" });
  assert.equal(tapTarget(""), null);
  assert.equal(tapTarget(42), null);
});
