"""python-zeroconf helper run INSIDE a test network namespace (via `ip netns exec`).

The independent witness for discovery tests: the same mDNS library Home Assistant uses.

    zc_tool.py browse   --iface-ip 10.213.7.2 --type _lanpush._tcp.local. --timeout 10 [--want NAME ...] [--gone NAME]
        Prints one JSON line per resolved service as it is found ({"event": "found", ...}), one per removal
        ({"event": "removed", "name": ...}), and finally {"event": "done", "services": [...]}.
        With --want: exits as soon as every wanted instance name resolved (or at the timeout).
        With --gone: exits as soon as that instance was reported removed (or at the timeout).
    zc_tool.py register --iface-ip 10.213.7.2 --type _lanpush._tcp.local. --name NAME --port 1234 [--txt k=v ...]
        Registers one service, prints {"event": "registered", "name": ...} and keeps it until stdin closes
        or SIGTERM, then unregisters it.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def instance_name(full: str, type_: str) -> str:
    suffix = "." + type_
    return full[: -len(suffix)] if full.endswith(suffix) else full


def describe(info: ServiceInfo, type_: str) -> dict:
    txt = {}
    for key, value in (info.properties or {}).items():
        k = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
        if value is None:
            v = ""
        elif isinstance(value, bytes):
            v = value.decode("utf-8", "replace")
        else:
            v = str(value)
        txt[k] = v
    raw_txt = []
    if info.text:
        # Raw TXT strings in wire order (length-prefixed).
        data, i = info.text, 0
        while i < len(data):
            n = data[i]
            raw_txt.append(data[i + 1 : i + 1 + n].decode("utf-8", "replace"))
            i += 1 + n
    return {
        "name": instance_name(info.name, type_),
        "type": info.type,
        "server": info.server,
        "addresses": info.parsed_addresses(),
        "port": info.port,
        "txt": txt,
        "txt_raw": raw_txt,
    }


def cmd_browse(args: argparse.Namespace) -> int:
    zc = Zeroconf(interfaces=[args.iface_ip], ip_version=IPVersion.V4Only)
    found: dict[str, dict] = {}
    lock = threading.Lock()
    done = threading.Event()
    wanted = set(args.want or [])

    def check_done() -> None:
        if wanted and not args.gone and wanted.issubset(found.keys()):
            done.set()

    def resolve(name: str, type_: str) -> None:
        # Resolve in a worker thread: ServiceInfo.request blocks and must not run on zeroconf's loop.
        info = ServiceInfo(type_, name)
        deadline = time.monotonic() + max(0.5, args.timeout)
        while not done.is_set() and time.monotonic() < deadline:
            if info.request(zc, 1500) and info.port and info.parsed_addresses():
                entry = describe(info, type_)
                with lock:
                    found[entry["name"]] = entry
                emit({"event": "found", **entry})
                with lock:
                    check_done()
                return
        if not done.is_set():
            emit({"event": "unresolved", "name": instance_name(name, type_)})

    def on_change(zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Added:
            threading.Thread(target=resolve, args=(name, service_type), daemon=True).start()
        elif state_change is ServiceStateChange.Updated:
            threading.Thread(target=resolve, args=(name, service_type), daemon=True).start()
        elif state_change is ServiceStateChange.Removed:
            short = instance_name(name, service_type)
            with lock:
                found.pop(short, None)
            emit({"event": "removed", "name": short})
            if args.gone and short == args.gone:
                done.set()

    browser = ServiceBrowser(zc, args.type, handlers=[on_change])
    try:
        done.wait(args.timeout)
    finally:
        browser.cancel()
        with lock:
            services = sorted(found.values(), key=lambda e: e["name"])
        emit({"event": "done", "services": services})
        zc.close()
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    zc = Zeroconf(interfaces=[args.iface_ip], ip_version=IPVersion.V4Only)
    props = {}
    for item in args.txt or []:
        key, _, value = item.partition("=")
        props[key] = value
    info = ServiceInfo(
        args.type,
        f"{args.name}.{args.type}",
        addresses=[socket.inet_aton(args.iface_ip)],
        port=args.port,
        properties=props,
        server=f"{args.host}.local.",
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    zc.register_service(info, allow_name_change=False)
    emit({"event": "registered", "name": args.name})

    def wait_stdin() -> None:
        try:
            sys.stdin.read()
        finally:
            stop.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    stop.wait()
    zc.unregister_service(info)
    zc.close()
    emit({"event": "unregistered", "name": args.name})
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("browse")
    b.add_argument("--iface-ip", required=True)
    b.add_argument("--type", default="_lanpush._tcp.local.")
    b.add_argument("--timeout", type=float, default=10.0)
    b.add_argument("--want", action="append")
    b.add_argument("--gone")
    r = sub.add_parser("register")
    r.add_argument("--iface-ip", required=True)
    r.add_argument("--type", default="_lanpush._tcp.local.")
    r.add_argument("--name", required=True)
    r.add_argument("--host", default="lanpush-zc-peer")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--txt", action="append")
    args = parser.parse_args()
    return cmd_browse(args) if args.cmd == "browse" else cmd_register(args)


if __name__ == "__main__":
    sys.exit(main())
