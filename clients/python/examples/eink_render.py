"""Draws a device's Live Activities on a 1-bit 800×480 image, for an e-ink panel (examples/eink.py runs it).

The display rules are the ones the companion app follows (HA's Live Activity docs, as README "Live preview" sums
them up): the title as header; the message line, or — with `chronometer` — a timer to `countdown_end` in its
place; top right the percentage when `progress`/`progress_max` are set, else `critical_text`; a progress bar.
Activities with an Aivi `template` (Aivi's template docs) draw it instead: `progress` (a simple bar, or 1–4
segments `split` with gaps or `layered` on one track, hatched tracks, labels under the segments, header and footer
values), `monitor` (two columns) and `generic` (state, percentage, bar).

Colors do not exist on a 1-bit panel: fills are black, tracks are outlines, hatched tracks are diagonal lines.
Nothing here ticks by the second: a countdown is shown in whole minutes, so the picture changes at most once a
minute and the panel (which wears with every refresh) is redrawn only then.

`render()` also returns where it drew what (`regions`: name → box and text), for tests and for panels that can
refresh part of the screen.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence, Tuple

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 800, 480
BLACK, WHITE = 0, 255
# Cards on one screen at most; more activities are counted in a footer line.
MAX_CARDS = 3
FONT_DIRS = ("/usr/share/fonts/truetype/dejavu/", "/usr/share/fonts/dejavu/", "/Library/Fonts/")

Box = Tuple[int, int, int, int]


@dataclass
class Region:
    box: Box
    text: str = ""


@dataclass
class Rendered:
    image: Image.Image
    regions: Dict[str, Region] = field(default_factory=dict)


_fonts: Dict[Tuple[bool, int], Any] = {}


def font(size: int, bold: bool = False) -> Any:
    key = (bold, size)
    if key not in _fonts:
        name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
        for folder in FONT_DIRS:
            try:
                _fonts[key] = ImageFont.truetype(folder + name, size)
                break
            except OSError:
                continue
        else:  # Pillow's own font (scalable since Pillow 10.1)
            _fonts[key] = ImageFont.load_default(size)
    return _fonts[key]


def fit(draw: ImageDraw.ImageDraw, text: str, face: Any, width: int) -> str:
    """`text`, cut with an ellipsis to fit `width` pixels."""
    if draw.textlength(text, font=face) <= width:
        return text
    while text and draw.textlength(text + "…", font=face) > width:
        text = text[:-1]
    return text + "…"


def minutes_text(seconds: float) -> str:
    """A countdown in whole minutes (rounded up while it runs); past its end the chronometer counts up."""
    if seconds >= 0:
        m = math.ceil(seconds / 60)
        return f"{m // 60} h {m % 60:02d} min left" if m >= 60 else f"{m} min left"
    m = math.floor(-seconds / 60)
    return f"+{m // 60} h {m % 60:02d} min" if m >= 60 else f"+{m} min"


def visible(activities: Sequence[Dict[str, Any]], now: float) -> List[Dict[str, Any]]:
    """Ended activities stay until their dismissal date (the client removes them at its next frame; the panel
    should not wait for one)."""
    return [a for a in activities
            if not (a["phase"] == "ended" and a.get("dismissal_date") is not None and a["dismissal_date"] <= now)]


def render(activities: Sequence[Dict[str, Any]], now: float, status: str = "live") -> Rendered:
    """Activities in the order a phone shows them (`client.activities()`), at time `now` (Unix seconds)."""
    image = Image.new("1", (WIDTH, HEIGHT), WHITE)
    out = Rendered(image)
    draw = ImageDraw.Draw(image)
    shown = visible(activities, now)
    if status != "live":  # say so, so a stale picture is never taken for the current one
        label = {"connecting": "connecting…", "offline": "gateway unreachable", "auth_rejected": "token rejected"}
        text = label.get(status, status)
        draw.rectangle((0, HEIGHT - 26, WIDTH, HEIGHT), fill=BLACK)
        draw.text((12, HEIGHT - 23), text, font=font(18, True), fill=WHITE)
        out.regions["status"] = Region((0, HEIGHT - 26, WIDTH, HEIGHT), text)
    if not shown:
        text = "No activities"
        face = font(36, True)
        w = draw.textlength(text, font=face)
        draw.text(((WIDTH - w) / 2, HEIGHT / 2 - 24), text, font=face, fill=BLACK)
        out.regions["empty"] = Region((0, 0, WIDTH, HEIGHT), text)
        return out
    cards = shown[:MAX_CARDS]
    footer = 26 if status != "live" or len(shown) > MAX_CARDS else 0
    height = (HEIGHT - footer) // len(cards)
    for i, activity in enumerate(cards):
        box = (0, i * height, WIDTH, (i + 1) * height)
        Card(draw, out, f"card{i}", box, now).paint(activity)
        if i > 0:
            draw.line((16, box[1], WIDTH - 16, box[1]), fill=BLACK, width=2)
    if len(shown) > MAX_CARDS and status == "live":
        more = f"+{len(shown) - MAX_CARDS} more"
        draw.text((12, HEIGHT - 24), more, font=font(18), fill=BLACK)
        out.regions["more"] = Region((0, HEIGHT - 26, WIDTH, HEIGHT), more)
    return out


class Card:
    """One activity in `box`; fonts and spacing scale with the card's height (one, two or three cards)."""

    def __init__(self, draw: ImageDraw.ImageDraw, out: Rendered, name: str, box: Box, now: float) -> None:
        self.draw, self.out, self.name, self.box, self.now = draw, out, name, box, now
        self.s = (box[3] - box[1]) / 150  # 1.0 for three cards on the screen
        self.pad = round(14 * self.s)
        self.left, self.right = box[0] + 20, box[2] - 20
        self.y = box[1] + self.pad

    def px(self, value: float) -> int:
        return max(1, round(value * min(self.s, 2.0)))

    def region(self, key: str, box: Box, text: str = "") -> None:
        self.out.regions[f"{self.name}.{key}"] = Region(box, text)

    def text_row(self, key: str, left: str, right: str = "", size: int = 24, bold: bool = False) -> None:
        """One line: `left` from the left edge, `right` flush right; the left text gives way."""
        face = font(self.px(size), bold)
        height = self.px(size * 1.25)
        right_w = int(self.draw.textlength(right, font=face)) if right else 0
        left = fit(self.draw, left, face, self.right - self.left - right_w - (16 if right else 0))
        self.draw.text((self.left, self.y), left, font=face, fill=BLACK)
        self.region(key, (self.left, self.y, self.right - right_w, self.y + height), left)
        if right:
            self.draw.text((self.right - right_w, self.y), right, font=face, fill=BLACK)
            self.region(key + "_right", (self.right - right_w, self.y, self.right, self.y + height), right)
        self.y += height

    def bar(self, key: str, fraction: float) -> None:
        """A plain bar: a black outline, filled from the left."""
        h = self.px(20)
        box = (self.left, self.y + self.px(4), self.right, self.y + self.px(4) + h)
        self.draw.rectangle(box, outline=BLACK, width=2)
        fill_box(self.draw, box, fraction)
        self.region(key, box, f"{round(clamp(fraction) * 100)}%")
        self.y = box[3] + self.px(6)

    def paint(self, a: Dict[str, Any]) -> None:
        state = a.get("state") or {}
        template = state.get("template")
        badge = {"ended": "Ended", "stale": "Stale"}.get(a["phase"], "")
        if isinstance(template, dict) and isinstance(template.get("template"), str):
            self.text_row("title", a["attributes"].get("title", ""), badge, size=16)
            kind = template["template"]
            if kind == "monitor":
                self.monitor(template)
            elif kind == "generic":
                self.generic(template)
            else:
                self.progress_template(template)
            return
        fraction = progress_fraction(state)
        critical = state.get("critical_text") if isinstance(state.get("critical_text"), str) else ""
        # Top right: the percentage replaces critical_text when there is a bar (HA's Live Activity docs).
        top_right = f"{round(fraction * 100)}%" if fraction is not None else critical
        self.text_row("title", a["attributes"].get("title", ""), top_right, size=30, bold=True)
        if state.get("chronometer") is True and isinstance(state.get("countdown_end"), (int, float)):
            line = minutes_text(state["countdown_end"] - self.now)
        else:
            line = state.get("message") if isinstance(state.get("message"), str) else ""
        self.text_row("message", line, badge, size=24)
        if fraction is not None:
            self.bar("bar", fraction)

    def progress_template(self, t: Dict[str, Any]) -> None:
        self.text_row("header", value_text(t.get("header_left"), self.now), value_text(t.get("header_right"), self.now),
                      size=28, bold=True)
        bar = t.get("progress") if isinstance(t.get("progress"), dict) else {}
        if bar.get("style") == "segmented" and isinstance(bar.get("segments"), list) and bar["segments"]:
            self.segmented("bar", bar)
        else:
            self.bar("bar", number(bar.get("value")))
        footer = (value_text(t.get("footer_left"), self.now), value_text(t.get("footer_right"), self.now))
        if any(footer):
            self.text_row("footer", footer[0], footer[1], size=18)

    def segmented(self, key: str, bar: Dict[str, Any]) -> None:
        """Segments side by side with gaps (`split`, the default) or on one track (`layered`). Each fills with its
        share of the overall `value`; a hatched track is drawn as diagonal lines."""
        segments = [s for s in bar["segments"][:4] if isinstance(s, dict)]
        value = clamp(number(bar.get("value")))
        layered = bar.get("display") == "layered"
        gap = 0 if layered else self.px(8)
        h = self.px(20)
        top = self.y + self.px(4)
        width = self.right - self.left - gap * (len(segments) - 1)
        total = sum(max(0.0, number(s.get("value"))) for s in segments) or 1.0
        x, start = float(self.left), 0.0
        label_face = font(self.px(14))
        for i, segment in enumerate(segments):
            share = max(0.0, number(segment.get("value"))) / total
            x1 = x + share * width
            box = (round(x), top, round(x1), top + h)
            filled = clamp((value - start) / share) if share > 0 else 0.0
            start += share
            if segment.get("track_fill") == "hatched":
                hatch(self.draw, (box[0] + 2, top + 2, box[2] - 2, top + h - 2))
            if not layered or i == 0:
                self.draw.rectangle(box if not layered else (self.left, top, self.right, top + h), outline=BLACK, width=2)
            fill_box(self.draw, box, filled)
            if layered and i > 0:  # the boundary between two segments of one track
                self.draw.line((box[0], top, box[0], top + h), fill=BLACK, width=2)
            self.region(f"{key}.segment{i}", box, f"{round(filled * 100)}%")
            if isinstance(segment.get("label"), str):
                label = fit(self.draw, segment["label"], label_face, box[2] - box[0])
                self.draw.text((box[0], top + h + self.px(3)), label, font=label_face, fill=BLACK)
            x = x1 + gap
        self.region(key, (self.left, top, self.right, top + h), f"{round(value * 100)}%")
        labels = any(isinstance(s.get("label"), str) for s in segments)
        self.y = top + h + self.px(6) + (self.px(18) if labels else 0)

    def generic(self, t: Dict[str, Any]) -> None:
        value = clamp(number(t.get("progress")))
        self.text_row("header", str(t.get("state") or ""), f"{round(value * 100)}%", size=28, bold=True)
        self.bar("bar", value)
        if isinstance(t.get("remaining_time"), (int, float)):
            # remaining_time is relative to the update that carried it; shown as sent.
            self.text_row("footer", minutes_text(t["remaining_time"]), size=18)

    def monitor(self, t: Dict[str, Any]) -> None:
        primary = "right" if t.get("primary_column") == "right" else "left"
        top, half = self.y, (self.right - self.left) // 2
        for side in ("left", "right"):
            column = t.get(f"{side}_column")
            if not isinstance(column, dict):
                continue
            x, y = self.left + (half if side == "right" else 0), top
            for part, size, bold in (("header", 16, False), ("value", 30 if side == primary else 24, True),
                                     ("footer", 16, False)):
                text = value_text(column.get(part), self.now) if part == "value" else column.get(part)
                if not isinstance(text, str) or not text:
                    continue
                face = font(self.px(size), bold)
                text = fit(self.draw, text, face, half - 12)
                self.draw.text((x, y), text, font=face, fill=BLACK)
                self.region(f"{side}.{part}", (x, y, x + half, y + self.px(size * 1.25)), text)
                y += self.px(size * 1.25)
            self.y = max(self.y, y)


def fill_box(draw: ImageDraw.ImageDraw, box: Box, fraction: float) -> None:
    """Fills the inside of a bar outlined 2 pixels wide (columns and rows box+2 … box−2) from the left."""
    x0, y0, x1, y1 = box[0] + 2, box[1] + 2, box[2] - 2, box[3] - 2
    columns = round((x1 - x0 + 1) * clamp(fraction))
    if columns > 0:
        draw.rectangle((x0, y0, x0 + columns - 1, y1), fill=BLACK)


def hatch(draw: ImageDraw.ImageDraw, box: Box, step: int = 6) -> None:
    """Diagonal lines inside `box`, inclusive (an unfilled, hatched track)."""
    x0, y0, x1, y1 = box
    draw.point([(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1) if (x + y) % step == 0], fill=BLACK)


def progress_fraction(state: Dict[str, Any]) -> Optional[float]:
    """0…1 when `progress` and `progress_max` are both set (HA sends numbers; templates may make them strings)."""
    p, m = number(state.get("progress"), None), number(state.get("progress_max"), None)
    if p is None or m is None or m <= 0:
        return None
    return clamp(p / m)


def value_text(value: Any, now: float) -> str:
    """An Aivi Value (`{value, text_color?, formatter?}`): its text; `time_since` / `time_until` in minutes."""
    if not isinstance(value, dict) or value.get("value") is None:
        return ""
    text = str(value["value"])
    if value.get("formatter") in ("time_since", "time_until"):
        try:
            at = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
        seconds = at.timestamp() - now
        if value["formatter"] == "time_until":
            return minutes_text(seconds)
        return f"{math.floor(-seconds / 60)} min ago"
    return text


def number(value: Any, default: Any = 0.0) -> Any:
    if isinstance(value, bool):
        return default
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def clamp(x: float) -> float:
    return min(1.0, max(0.0, x))
