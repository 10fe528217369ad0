"""The Home Assistant add-on in Config/addon, checked without Docker.

- config.yaml against the Supervisor's rules for add-on configs (required keys, slug, arch, image, watchdog, ports,
  schema types) and its options -> /data/options.json validation, re-implemented here from those rules;
- the options are lanpushd's own config keys: the default options, and options as HA writes them, are given to
  `lanpushd --check-config --config options.json` (which rejects unknown keys, so passing proves the mapping);
- the Dockerfile: one FROM of HA's Debian bookworm base plus a named Swift bookworm build stage that builds the
  release archive of the same version with --static-swift-stdlib; runtime packages cover every shared library the
  daemon links (read from the binary with ldd, mapped to Debian packages with dpkg);
- the s6-overlay v3 services (dbus, avahi, lanpushd): layout, dependencies, executables, commands — and they are
  run for real: the three `run` scripts in a network namespace start dbus-daemon, avahi-daemon (allow-interfaces
  from the options) and lanpushd on /data/options.json, and python-zeroconf in a second namespace finds the
  gateway and talks to it.

    .venv-test/bin/python -m pytest -v Tests/integration/test_addon.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from netns import NetnsUnavailable, TestBed, netns_permitted

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "Config" / "addon"
S6 = ADDON / "rootfs" / "etc" / "s6-overlay" / "s6-rc.d"
SERVICES = ("dbus", "avahi", "lanpushd")


def _scratch() -> Path:
    return (ROOT / os.environ.get("LANPUSH_SCRATCH_PATH", ".build")).resolve()


@pytest.fixture(scope="module")
def lanpushd() -> Path:
    explicit = os.environ.get("LANPUSHD_BINARY")
    path = Path(explicit) if explicit else _scratch() / "debug" / "lanpushd"
    if not explicit and (os.environ.get("LANPUSH_REBUILD") or not path.exists()):
        subprocess.run(["swift", "build", "--scratch-path", str(_scratch()), "--product", "lanpushd"], cwd=ROOT,
                       check=True, timeout=1800)
    assert path.exists(), f"{path} not found"
    return path


def load_yaml(path: Path):
    """PyYAML from Debian (python3-yaml, scripts/setup --test): the test venv has no YAML parser of its own."""
    result = subprocess.run(["/usr/bin/python3", "-c", "import json, sys, yaml; "
                             "json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", str(path)],
                            capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        pytest.fail(f"cannot read {path} (python3-yaml missing? run scripts/setup --test): {result.stderr}")
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def config() -> dict:
    return load_yaml(ADDON / "config.yaml")


def lanpush_version() -> str:
    text = (ROOT / "Sources/LanpushCore/Version.swift").read_text()
    match = re.search(r'current\s*=\s*"([^"]+)"', text)
    assert match, text
    return match.group(1)


# --------------------------------------------------------------------------------------------------
# The Supervisor's rules (supervisor/addons/validate.py, options.py), written out independently


RE_SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
RE_DOCKER_IMAGE = re.compile(r"^([a-zA-Z\-.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)$")
RE_WATCHDOG = re.compile(r"^(?:https?|\[PROTO:\w+\]|tcp)://\[HOST\]:(\[PORT:(\d+)\]|\d+)(.*)$")
RE_PORT_KEY = re.compile(r"^\d+(?:/(?:tcp|udp))?$")
RE_SCHEMA_ELEMENT = re.compile(
    r"^(?:|bool|email|url|port|device(?:\((?P<filter>subsystem=[a-z]+)\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>\d+)?,(?P<i_max>\d+)?\))?"
    r"|float(?:\((?P<f_min>[\d.]+)?,(?P<f_max>[\d.]+)?\))?"
    r"|match\((?P<match>.*)\)"
    r"|list\((?P<list>.+)\)"
    r")\??$")
ARCHES = {"armhf", "armv7", "aarch64", "amd64", "i386"}


class Invalid(Exception):
    pass


def check_schema_element(element, path: str) -> None:
    if isinstance(element, str):
        assert RE_SCHEMA_ELEMENT.match(element), f"{path}: '{element}' is not a Supervisor schema type"
    elif isinstance(element, list):
        assert len(element) == 1, f"{path}: a list schema holds exactly one element"
        assert not isinstance(element[0], list), f"{path}: a list may not directly contain a list"
        check_schema_element(element[0], f"{path}[]")
    elif isinstance(element, dict):
        for key, value in element.items():
            check_schema_element(value, f"{path}.{key}")
    else:
        raise AssertionError(f"{path}: unexpected schema value {element!r}")


def validate_single(typ: str, value, key: str):
    """Coerces one option value as the Supervisor does before writing options.json."""
    if value is None:
        raise Invalid(f"missing required option '{key}'")
    m = RE_SCHEMA_ELEMENT.match(typ)
    assert m, typ

    def bounds(lo: str, hi: str, number: float) -> None:
        if m.group(lo) and number < float(m.group(lo)):
            raise Invalid(f"{key}: {number} < {m.group(lo)}")
        if m.group(hi) and number > float(m.group(hi)):
            raise Invalid(f"{key}: {number} > {m.group(hi)}")

    if typ.startswith(("str", "password")):
        return str(value)
    if typ.startswith("int"):
        if isinstance(value, bool):
            raise Invalid(f"{key}: not an int")
        number = int(value)
        bounds("i_min", "i_max", number)
        return number
    if typ.startswith("float"):
        number = float(value)
        bounds("f_min", "f_max", number)
        return number
    if typ.startswith("bool"):
        if not isinstance(value, bool):
            raise Invalid(f"{key}: not a bool")
        return value
    if typ.startswith("url"):
        if not re.match(r"^https?://[^\s/]+", str(value)):
            raise Invalid(f"{key}: not a URL")
        return str(value)
    if typ.startswith("match"):
        if not re.match(m.group("match"), str(value)):
            raise Invalid(f"{key}: '{value}' does not match {m.group('match')}")
        return str(value)
    if typ.startswith("list"):
        if str(value) not in m.group("list").split("|"):
            raise Invalid(f"{key}: '{value}' not in {m.group('list')}")
        return str(value)
    raise AssertionError(f"type {typ} not used by this add-on")


def optional(schema) -> bool:
    if isinstance(schema, list) and schema:
        schema = schema[0]
    return isinstance(schema, str) and schema.endswith("?")


def validate_options(schema: dict, options: dict, where: str = "root") -> dict:
    """The Supervisor's AddonOptions: unknown keys dropped (with a warning), missing required keys rejected."""
    out = {}
    for key, value in options.items():
        if key not in schema:
            raise Invalid(f"option '{key}' in {where} is not in the schema (the Supervisor would drop it)")
        out[key] = validate_element(schema[key], value, key)
    for key in set(schema) - set(out):
        if not optional(schema[key]):
            raise Invalid(f"missing option '{key}' in {where}")
    return out


def validate_element(typ, value, key: str):
    if isinstance(typ, list):
        if not isinstance(value, list):
            raise Invalid(f"{key}: not a list")
        return [validate_element(typ[0], v, key) for v in value]
    if isinstance(typ, dict):
        if not isinstance(value, dict):
            raise Invalid(f"{key}: not a dict")
        return validate_options(typ, value, key)
    return validate_single(typ, value, key)


def key_paths(tree, prefix: str = "") -> set[str]:
    paths = set()
    if isinstance(tree, dict):
        for k, v in tree.items():
            paths.add(prefix + k)
            paths |= key_paths(v, prefix + k + ".")
    elif isinstance(tree, list) and tree and isinstance(tree[0], dict):
        paths |= key_paths(tree[0], prefix + "[].")
    return paths


# --------------------------------------------------------------------------------------------------
# config.yaml


def test_config_has_the_required_keys_and_values(config: dict):
    for key in ("name", "version", "slug", "description", "arch", "url", "startup", "init", "host_network",
                "homeassistant_api", "image", "watchdog", "ports", "options", "schema"):
        assert key in config, f"config.yaml lacks {key}"
    assert isinstance(config["name"], str) and config["name"]
    assert isinstance(config["description"], str) and config["description"]
    assert isinstance(config["version"], str), "quote the version: YAML would read 0.1 as a float"
    assert config["version"] == lanpush_version(), "add-on version != LanpushVersion.current"
    assert RE_SLUG.match(config["slug"]) and config["slug"] == "lanpush"
    assert config["arch"] == ["aarch64", "amd64"] and set(config["arch"]) <= ARCHES
    assert re.match(r"^https://[^\s/]+/\S+$", config["url"])
    assert config["startup"] == "services"
    assert config.get("boot", "auto") in ("auto", "manual")
    assert config["init"] is False, "s6-overlay v3 is the image's own init: the Supervisor must not add one"
    assert config["host_network"] is True, "mDNS and LAN clients need the host network"
    assert config["homeassistant_api"] is True
    assert RE_DOCKER_IMAGE.match(config["image"]) and "{arch}" in config["image"], config["image"]


def test_watchdog_and_ports_follow_the_listen_option(config: dict):
    listen_port = int(config["options"]["listen"].rsplit(":", 1)[1])
    match = RE_WATCHDOG.match(config["watchdog"])
    assert match, config["watchdog"]
    assert match.group(2) and int(match.group(2)) == listen_port, "watchdog must probe the listen port"
    assert match.group(3) == "/healthz", "the watchdog probes the open health endpoint"
    for key, value in config["ports"].items():
        assert RE_PORT_KEY.match(key) and (value is None or 1 <= int(value) <= 65535), (key, value)
    assert f"{listen_port}/tcp" in config["ports"]
    assert set(config.get("ports_description", {})) <= set(config["ports"])


def test_schema_types_are_supervisor_types_and_cover_every_option(config: dict):
    check_schema_element(config["schema"], "schema")
    options_paths = key_paths(config["options"])
    schema_paths = key_paths(config["schema"])
    missing = options_paths - schema_paths
    assert not missing, f"options without a schema entry (the Supervisor drops them): {sorted(missing)}"
    # Every schema key has a default (a device's keys apart: the list starts empty), so the options page shows
    # every setting with its default value.
    undefaulted = {p for p in schema_paths if not p.startswith("devices.[]")} - options_paths
    assert not undefaulted, f"schema keys without a default: {sorted(undefaulted)}"


def test_default_options_pass_the_supervisors_validation(config: dict):
    written = validate_options(config["schema"], config["options"])
    assert written["listen"] == "0.0.0.0:8765"
    # Wrong values are refused before lanpushd ever sees them.
    for bad in ({"log_level": "loud"}, {"listen": "8765"}, {"session": {**config["options"]["session"], "window": 0}},
                {"devices": [{"id": "a b", "token": "x" * 20}]}, {"mdns": {**config["options"]["mdns"],
                                                                             "interfaces": ["eth0; rm"]}}):
        with pytest.raises(Invalid):
            validate_options(config["schema"], {**config["options"], **bad})


def check_config(lanpushd: Path, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(lanpushd), "--check-config", "--config", str(path)], capture_output=True, text=True,
                          timeout=30)


def test_lanpushd_accepts_the_default_options(lanpushd: Path, config: dict, tmp_path: Path):
    """Every option key is a lanpushd config key: the options.json the Supervisor writes parses as lanpushd config."""
    options = tmp_path / "options.json"
    options.write_text(json.dumps(validate_options(config["schema"], config["options"])))
    result = check_config(lanpushd, options)
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout and "listen 0.0.0.0:8765" in result.stdout, result.stdout

    # Control: lanpushd does reject a key it does not know, so the pass above is a real check of every key.
    options.write_text(json.dumps({**config["options"], "mdns": {**config["options"]["mdns"], "colour": "red"}}))
    result = check_config(lanpushd, options)
    assert result.returncode == 64 and "mdns.colour" in result.stderr, result.stderr


def test_lanpushd_accepts_options_as_a_user_fills_them_in(lanpushd: Path, config: dict, tmp_path: Path):
    user = json.loads(json.dumps(config["options"]))
    user.update(admin_token="admin-token-from-the-ui-0123456789abcdef", log_level="debug", listen="0.0.0.0:8766")
    user["devices"] = [{"id": "kitchen-tablet", "name": "Kitchen tablet", "token": "k" * 32},
                       {"id": "hall", "token": "h" * 24}]
    user["session"]["ack_timeout"] = 2.5
    user["mdns"].update(name="lanpush at home", interfaces=["eth0", "wlan0"])
    user["home_assistant"].update(url="http://homeassistant.local:8123", devices=["kitchen-tablet"])
    written = validate_options(config["schema"], user)
    assert isinstance(written["session"]["ping_interval"], float)  # the Supervisor writes floats for float()
    options = tmp_path / "options.json"
    options.write_text(json.dumps(written))
    result = check_config(lanpushd, options)
    assert result.returncode == 0, result.stderr
    assert "2 devices" in result.stdout and "listen 0.0.0.0:8766" in result.stdout, result.stdout

    # Optional settings left empty may be missing from options.json altogether: lanpushd takes its defaults.
    for section, key in (("", "admin_token"), ("", "viewer_token"), ("mdns", "name"), ("mdns", "interfaces"),
                         ("home_assistant", "url"), ("home_assistant", "token"), ("home_assistant", "devices")):
        (written[section] if section else written).pop(key)
    written["devices"][1].pop("name", None)
    validate_options(config["schema"], written)
    options.write_text(json.dumps(written))
    result = check_config(lanpushd, options)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------------------------------
# Dockerfile


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ADDON / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, rest = line.partition(" ")
            out.append((op.upper(), rest.strip()))
    return out


def test_dockerfile_has_one_ha_base_and_a_named_swift_build_stage(config: dict):
    instructions = dockerfile_instructions()
    froms = [rest for op, rest in instructions if op == "FROM"]
    ha = [f for f in froms if f.split()[0] == "ghcr.io/home-assistant/base-debian:bookworm"]
    assert len(ha) == 1, f"exactly one FROM of HA's multi-arch Debian bookworm base: {froms}"
    assert froms[-1] == ha[0], "the HA base is the final (runtime) stage"
    for f in froms[:-1]:
        assert re.fullmatch(r"swift:[\d.]+-bookworm AS \w+", f), f"only a named Swift bookworm build stage: {f}"
    assert not any("BUILD_FROM" in rest for _, rest in instructions), "explicit FROM, no build.yaml indirection"
    args = dict(rest.split("=", 1) for op, rest in instructions if op == "ARG" and "=" in rest)
    assert args["BUILD_VERSION"] == config["version"], "the image builds the release of the add-on's version"

    build = " ".join(rest for op, rest in instructions[:instructions.index(("FROM", froms[-1]))] if op == "RUN")
    assert "--static-swift-stdlib" in build and "--product lanpushd" in build and "-c release" in build
    assert re.search(r"archive/refs/tags/v\$\{BUILD_VERSION\}\.tar\.gz", args["LANPUSH_SOURCE"]), \
        "builds from the release source archive of the same version"
    copies = [rest for op, rest in instructions if op == "COPY"]
    assert "rootfs /" in copies and any(c.startswith("--from=build ") for c in copies)



def test_dockerfile_links_lanpushd_as_scripts_install_does():
    """The add-on (a Raspberry Pi, often) and the systemd install get the same binary: no run-time exclusivity
    checks, lld, packed relative relocations, no exported symbols, and functions in sections of their own laid out
    in the committed order, which keep ~10 MiB of it out of resident memory."""
    flags = ("-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections "
             "-Xswiftc -enforce-exclusivity=unchecked "
             "-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic "
             "-Xlinker --symbol-ordering-file=")
    build = " ".join(" ".join(rest for op, rest in dockerfile_instructions() if op == "RUN").split())
    # scripts/install (and scripts/bench) take the compile and link flags from the file every release build in the
    # repo sources.
    shared = (ROOT / "scripts" / "release-flags.sh").read_text()
    install = (ROOT / "scripts" / "install").read_text()
    for name in ("release_compile_flags", "release_link_flags"):
        install = install.replace('"${%s[@]}"' % name, re.search(r"^%s=\((.*)\)$" % name, shared, re.M).group(1))
    install = " ".join(re.sub(r"\\\n\s*", " ", install).split())
    assert flags + "/src/scripts/lanpushd.order -Xlinker --no-warn-symbol-ordering -Xlinker -T -Xlinker " \
        "/src/scripts/lanpushd.ld" in build
    assert flags + '"$PWD/scripts/lanpushd.order" -Xlinker --no-warn-symbol-ordering -Xlinker -T -Xlinker ' \
        '"$PWD/scripts/lanpushd.ld" --static-swift-stdlib' in install
    assert '"${release_link_flags[@]}"' in (ROOT / "scripts" / "bench").read_text(), \
        "the benchmark measures the binary scripts/install links"
    # The order is the functions a gateway runs (scripts/order-file): a list of thousands, not a placeholder.
    order = (ROOT / "scripts" / "lanpushd.order").read_text().split()
    assert len(order) > 1000 and "swift_retain" in order

def runtime_packages() -> set[str]:
    instructions = dockerfile_instructions()
    last_from = max(i for i, (op, _) in enumerate(instructions) if op == "FROM")
    packages: set[str] = set()
    for op, rest in instructions[last_from:]:
        if op == "RUN" and "apt-get install" in rest:
            tail = rest.split("apt-get install", 1)[1].split("&&")[0]
            packages |= {w for w in tail.split() if not w.startswith("-")}
    return packages


def test_dockerfile_runtime_packages(lanpushd: Path):
    packages = runtime_packages()
    assert {"libwebsockets17", "libwebsockets-evlib-uv", "libuv1", "libavahi-client3", "dbus", "avahi-daemon", "jq"} <= packages, packages
    # Every shared library lanpushd needs beyond the Swift runtime (linked in with --static-swift-stdlib) comes
    # from a listed package. Read from this build: the libraries of the binary and of the Swift runtime it loads.
    ldd = subprocess.run(["ldd", str(lanpushd)], capture_output=True, text=True, check=True).stdout
    resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", ldd, re.M))
    toolchain = {path for path in resolved.values() if "/swift/" in path or "libswift" in path
                 or "Foundation" in path or "libdispatch" in path or "libBlocksRuntime" in path}
    direct = set()
    for obj in [str(lanpushd), *toolchain]:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]",
                            subprocess.run(["readelf", "-d", obj], capture_output=True, text=True).stdout)
        direct |= {resolved[n] for n in needed if n in resolved and resolved[n] not in toolchain}
    base = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}  # in every Debian base image
    provided = set(packages)
    for package in packages:  # and what apt installs with the listed packages (libavahi-client3 -> -common3)
        depends = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", package], capture_output=True, text=True)
        provided |= {d.split()[0].split(":")[0] for d in depends.stdout.split(",") if d.strip()}
    missing = {}
    for path in sorted(direct):
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
        if owner.returncode != 0:
            owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        package = owner.stdout.split(":")[0].strip()
        assert package, f"no Debian package owns {path}"
        if package not in base and package not in provided:
            missing[path] = package
    assert not missing, f"runtime libraries not installed by the Dockerfile: {missing}"


# --------------------------------------------------------------------------------------------------
# s6-overlay v3 services


def test_s6_services_layout():
    assert sorted(p.name for p in (S6 / "user" / "contents.d").iterdir()) == sorted(SERVICES)
    for name in SERVICES:
        service = S6 / name
        assert (service / "type").read_text().strip() == "longrun", name
        run = service / "run"
        assert os.access(run, os.X_OK), f"{run} must be executable"
        assert run.read_text().startswith("#!/command/with-contenv bash\n"), name
        syntax = subprocess.run(["bash", "-n", str(run)], capture_output=True, text=True)
        assert syntax.returncode == 0, syntax.stderr
    deps = {name: sorted(p.name for p in (S6 / name / "dependencies.d").iterdir()) for name in SERVICES}
    assert deps == {"dbus": ["base"], "avahi": ["dbus"], "lanpushd": ["avahi", "dbus"]}, deps
    finish = S6 / "lanpushd" / "finish"
    assert os.access(finish, os.X_OK)
    assert subprocess.run(["bash", "-n", str(finish)]).returncode == 0
    generator = ADDON / "rootfs/usr/local/bin/lanpush-avahi-conf"
    assert os.access(generator, os.X_OK)


def exec_line(service: str) -> str:
    lines = [l.strip() for l in (S6 / service / "run").read_text().splitlines() if l.strip().startswith("exec ")]
    assert len(lines) == 1, f"{service}/run must exec exactly one daemon: {lines}"
    return lines[0]


def test_s6_services_run_the_right_commands():
    dbus = exec_line("dbus")
    assert dbus.startswith("exec dbus-daemon --system --nofork") and "--nopidfile" in dbus
    fd = (S6 / "dbus" / "notification-fd").read_text().strip()
    assert f"--print-address={fd}" in dbus, "readiness: the bus address is written to the notification fd"
    avahi = exec_line("avahi")
    assert avahi.startswith("exec avahi-daemon -f /run/lanpush/avahi-daemon.conf")
    assert "lanpush-avahi-conf" in (S6 / "avahi" / "run").read_text()
    lanpushd = exec_line("lanpushd")
    assert lanpushd == 'exec lanpushd --config "$data/options.json" --state-dir "$data"'
    assert "data=${LANPUSH_DATA:-/data}" in (S6 / "lanpushd" / "run").read_text()
    finish = (S6 / "lanpushd" / "finish").read_text()
    assert "/run/s6-linux-init-container-results/exitcode" in finish and "/run/s6/basedir/bin/halt" in finish


def avahi_conf(options: dict, tmp_path: Path) -> str:
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    result = subprocess.run([str(ADDON / "rootfs/usr/local/bin/lanpush-avahi-conf"), str(path)], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_avahi_conf_takes_allow_interfaces_from_options(config: dict, tmp_path: Path):
    if shutil.which("jq") is None:
        pytest.fail("jq is missing: run scripts/setup --test")
    default = avahi_conf(config["options"], tmp_path)
    assert "[server]" in default and "enable-dbus=yes" in default
    assert "allow-interfaces" not in default, "no interfaces listed = all of them"
    chosen = avahi_conf({**config["options"], "mdns": {"enabled": True, "interfaces": ["eth0", "end0"]}}, tmp_path)
    assert re.search(r"^allow-interfaces=eth0,end0$", chosen, re.M), chosen
    hostile = avahi_conf({"mdns": {"interfaces": ["eth0\nenable-reflector=yes", 7, "wlan0"]}}, tmp_path)
    assert re.search(r"^allow-interfaces=wlan0$", hostile, re.M) and "enable-reflector=yes" not in hostile.split(
        "[reflector]")[0], hostile


def test_readme_local_build_variant(config: dict, tmp_path: Path):
    """README: a local add-on built on the host — the README's own sed on a copy of the folder."""
    readme = (ROOT / "README.md").read_text()
    command = "sed -i '/^image:/d' /addons/lanpush/config.yaml"
    assert command in readme
    copy = tmp_path / "addons" / "lanpush"
    shutil.copytree(ADDON, copy, symlinks=True)
    subprocess.run(["bash", "-c", command.replace("/addons/lanpush", str(copy))], check=True)
    local = load_yaml(copy / "config.yaml")
    assert "image" not in local, "without image: the Supervisor builds the folder's Dockerfile"
    assert {k: v for k, v in config.items() if k != "image"} == local, "only the image line may go"
    assert (copy / "Dockerfile").exists()


# --------------------------------------------------------------------------------------------------
# Documentation


def test_docs_changelog_translations(config: dict):
    docs = (ADDON / "DOCS.md").read_text()
    for key in config["schema"]:
        assert f"`{key}`" in docs, f"DOCS.md does not explain option {key}"
    assert "avahi-daemon" in docs
    changelog = (ADDON / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(config['version'])}\b", changelog, re.M), "CHANGELOG has no entry for version"
    translations = load_yaml(ADDON / "translations/en.yaml")
    assert set(translations["configuration"]) <= set(config["schema"])
    for key, entry in translations["configuration"].items():
        assert entry.get("name") and entry.get("description"), key
    assert set(translations.get("network", {})) <= set(config["ports"])


# --------------------------------------------------------------------------------------------------
# The services, run for real in a network namespace


@pytest.fixture
def bed():
    ok, why = netns_permitted()
    if not ok:
        pytest.skip(f"running the add-on's services needs network namespaces: {why}")
    try:
        testbed = TestBed(subnet="10.213.9", python=sys.executable).open()
    except NetnsUnavailable as exc:
        pytest.skip(f"`ip netns add` is not permitted here: {exc}")
    try:
        yield testbed
    finally:
        print(testbed.logs())
        testbed.close()


def test_addon_services_publish_and_serve_in_a_namespace(bed: TestBed, lanpushd: Path, config: dict):
    """dbus, avahi and lanpushd `run` scripts as s6 would start them (own /run, /data = the add-on's folder),
    with the options limiting avahi-daemon to namespace A's veth; zeroconf and a device client in B."""
    for tool in ("dbus-daemon", "avahi-daemon", "jq"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/setup --test")
    data = bed.tmp / "data"
    data.mkdir()
    port = 18790
    token = "addon-device-token-0123456789"
    options = json.loads(json.dumps(config["options"]))
    options.update(listen=f"0.0.0.0:{port}", admin_token="addon-admin-token-0123456789abcdef", log_level="debug",
                   devices=[{"id": "wall", "name": "Wall tablet", "token": token}])
    options["mdns"].update(name="lanpush add-on test", interfaces=[bed.veth_a])
    (data / "options.json").write_text(json.dumps(validate_options(config["schema"], options)))
    bindir = bed.tmp / "bin"
    bindir.mkdir()
    (bindir / "lanpushd").symlink_to(lanpushd)

    # One mount namespace for the three services (`ip netns exec` makes it): a private /run, as in the container,
    # and a private /var/lib/dbus for dbus-uuidgen. s6 starts each `run` in its service folder.
    script = f"""
        set -e
        mount -t tmpfs -o mode=0755,size=4m lanpush-addon-run /run
        mount -t tmpfs -o mode=0755,size=1m lanpush-addon-dbus /var/lib/dbus
        export PATH="{bindir}:{ADDON}/rootfs/usr/local/bin:$PATH" LANPUSH_DATA="{data}"
        (cd "{S6}/dbus" && exec bash ./run 3>/run/dbus-ready) &
        for i in $(seq 100); do [ -s /run/dbus-ready ] && break; sleep 0.1; done
        echo "dbus ready: $(cat /run/dbus-ready)"
        (cd "{S6}/avahi" && exec bash ./run) &
        cd "{S6}/lanpushd" && exec bash ./run
    """
    services = bed.spawn(bed.ns_a, "addon-services", ["bash", "-c", script])
    assert services.wait_for(r"dbus ready: unix:", 15), services.tail()
    assert services.wait_for(rf"\[avahi\] interfaces: {bed.veth_a}$", 15), services.tail()
    assert services.wait_for(r"Server startup complete", 15), services.tail()
    assert services.wait_for(r"lanpushd listening", 15), services.tail()

    found = bed.browse(want=["lanpush add-on test"], timeout=25)
    assert "lanpush add-on test" in found, f"zeroconf in B saw {sorted(found)}\n{services.tail()}"
    info = found["lanpush add-on test"]
    assert info["port"] == port and bed.addr_a in info["addresses"], info
    assert info["txt"]["proto"] == "lanpush.v1" and info["txt"]["version"] == config["version"], info

    # A device in B connects to what was advertised and gets an update the test posts there too.
    ipv4 = next(a for a in info["addresses"] if "." in a)  # avahi also publishes the veth's IPv6 link-local one
    result = bed.lan_client(ipv4, info["port"], info["txt"]["path"], token,
                            push={"admin_token": "addon-admin-token-0123456789abcdef", "target": "wall"})
    assert result["auth"]["device_id"] == "wall", result
    assert result["start"]["state"]["message"] == "Rinsing", result
    # The state folder is the add-on's /data.
    assert (data / "gateway_id").exists() and (data / "admin_token").exists() is False
