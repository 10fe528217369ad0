#!/usr/bin/env python3
"""A Raspberry Pi behind an e-ink panel as a lanpush device: its Live Activities, drawn 1-bit at 800×480.

    python3 eink.py --pair 'lanpush://192.168.1.5:8765/pair?code=…'   # once: redeem, keep the token
    python3 eink.py --out /run/lanpush/screen.png                       # then: keep the screen current
    python3 eink.py --panel waveshare                                   # or drive a Waveshare 7.5" V2 (800×480)

E-ink panels wear with every full refresh and take seconds to do one, so the screen is redrawn only when the
rendered picture changed, and at most once per `--min-interval` seconds (changes in between are merged: the
latest picture is drawn when the interval is up). The resume point and state live in `--state-dir`, so a
restart (or a power cut) resumes where it left off. See clients/python/README.md.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import sys
import time
from pathlib import Path
from typing import Any, Callable, List, Optional

from eink_render import render
from lanpush import Credentials, JSONFileStore, LanpushClient, pair

log = logging.getLogger("eink")
CONFIG = Path("~/.config/lanpush").expanduser()


class PNGPanel:
    """Writes each new picture to a PNG file (atomically: a viewer never reads half of one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writes = 0

    def show(self, image: Any) -> None:
        tmp = self.path.with_suffix(".tmp.png")
        image.save(tmp, "PNG")
        tmp.replace(self.path)
        self.writes += 1


class WavesharePanel:
    """Waveshare's 7.5" V2 e-Paper HAT (800×480) through its Python driver (`waveshare_epd`, from Waveshare's
    e-Paper repository). Sleeps between refreshes, as Waveshare asks, so the panel is not kept powered."""

    def __init__(self) -> None:
        from waveshare_epd import epd7in5_V2  # type: ignore[import-not-found]

        self.epd = epd7in5_V2.EPD()

    def show(self, image: Any) -> None:
        self.epd.init()
        self.epd.display(self.epd.getbuffer(image))
        self.epd.sleep()


class Redrawer:
    """Draws the latest picture when it differs from the one on the panel, at most once per `min_interval` s."""

    def __init__(self, panel: Any, min_interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.panel = panel
        self.min_interval = min_interval
        self.clock = clock
        self.shown: Optional[str] = None  # digest of the picture on the panel
        self.last_draw = -float("inf")
        self.pending: Optional[Any] = None
        self._timer: Optional[asyncio.TimerHandle] = None

    def offer(self, image: Any) -> None:
        """A freshly rendered picture; unchanged ones cost nothing."""
        digest = hashlib.sha256(image.tobytes()).hexdigest()
        if digest == self.shown:
            self.pending = None
            return
        self.pending = (image, digest)
        wait = self.last_draw + self.min_interval - self.clock()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        self._timer = None
        if self.pending is None:
            return
        image, digest = self.pending
        self.pending = None
        self.panel.show(image)
        self.shown, self.last_draw = digest, self.clock()
        log.info("panel redrawn")


async def run(client: LanpushClient, redrawer: Redrawer, tick: float = 30.0, grace: float = 60.0) -> None:
    """Re-renders on every event and every `tick` seconds (countdowns move, dismissal dates pass). A connection
    problem is shown only once it lasted `grace` seconds: a gateway restart should not cost two refreshes. The
    first picture waits for the first sync (or the grace period), so a start does not draw a stale one first."""
    not_live_since: List[float] = [time.monotonic()]
    synced_once: List[bool] = []

    def redraw() -> None:
        status = client.status
        if status == "live":
            not_live_since.clear()
            synced_once.append(True)
        elif not not_live_since:
            not_live_since.append(time.monotonic())
        problem = status == "auth_rejected" or (status != "live" and time.monotonic() - not_live_since[0] >= grace)
        if not synced_once and not problem:
            return
        redrawer.offer(render(client.activities(), time.time(), status if problem else "live").image)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(tick)
            redraw()

    ticking = asyncio.ensure_future(ticker())
    try:
        async for event in client:
            if event.type in ("activity", "snapshot", "status"):
                redraw()
    finally:
        ticking.cancel()


def main(argv: Optional[List[str]] = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    credentials_file = Path(args.credentials).expanduser()
    if args.pair:
        credentials = asyncio.run(pair(args.pair))
        credentials.save(credentials_file)
        print(f"paired as '{credentials.device_id}' with {credentials.host}; token kept in {credentials_file}")
        if args.once:
            return 0
    try:
        credentials = Credentials.load(credentials_file)
    except FileNotFoundError:
        print(f"no credentials in {credentials_file}: pair first (--pair 'lanpush://…')", file=sys.stderr)
        return 2
    panel = WavesharePanel() if args.panel == "waveshare" else PNGPanel(Path(args.out or "lanpush.png"))
    client = LanpushClient.from_credentials(credentials, store=JSONFileStore(Path(args.state_dir).expanduser()),
                                            supports_live_activities=True)
    client.on("auth_rejected", lambda e: log.error("token rejected (%s): pair again", e.message))
    try:
        asyncio.run(run(client, Redrawer(panel, args.min_interval)))
    except KeyboardInterrupt:
        pass
    return 1 if client.status == "auth_rejected" else 0


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pair", metavar="URL", help="redeem a pairing URL (lanpush://…/pair?code=…) and keep the token")
    p.add_argument("--credentials", default=str(CONFIG / "credentials.json"), help="where the token is kept")
    p.add_argument("--state-dir", default=str(CONFIG / "state"), help="the resume point and state")
    p.add_argument("--panel", choices=("png", "waveshare"), default="png")
    p.add_argument("--out", help="the PNG file (--panel png; default ./lanpush.png)")
    p.add_argument("--min-interval", type=float, default=30.0, help="seconds between panel refreshes at least")
    p.add_argument("--once", action="store_true", help="with --pair: pair and exit")
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
