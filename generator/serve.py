"""Run the corpus locally behind a real nginx (``corpus serve``) and flip maintenance (``corpus maintenance``).

``serve`` is what ``make serve`` runs: bring build/ up to date with corpus_src/, render the vhost into a
private prefix (default ``run/serve/``, ignored by git), then run nginx in the foreground until Ctrl-C or
SIGTERM. nginx runs in its own process group so that the signal reaches it once, from here, and so that
no worker can outlive the command.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from generator.errors import CorpusError
from generator.nginx_render import (
    RenderError,
    Settings,
    add_render_options,
    load_manifest,
    nginx_command,
    read_settings,
    render_and_write,
    settings_from_args,
)
from generator.output import MANIFEST_FILE
from generator.pipeline import build, compile_build
from generator.secret_values import PRIVATE_RUN_DIR, SecretError, new_secret, read_secret_file, write_private

DEFAULT_PREFIX = Path(PRIVATE_RUN_DIR) / "serve"
DEV_SECRET_FILE = "dev-secret"
STOP_TIMEOUT = 10.0
READY_TIMEOUT = 10.0


# ------------------------------------------------------------------------------------- build if needed


def ensure_build(root: Path, base_url: str) -> str:
    """Compile corpus_src/ in memory; rebuild build/ and manifest/ only if they differ. Returns what happened.

    Comparing bytes, not mtimes, is exact whatever git or a copy did to the timestamps, and leaves an
    up-to-date build untouched. The rebuild goes through :func:`generator.pipeline.build`, so whatever
    guards a build (atomic swap, a frozen season) guards this one too.
    """
    result = compile_build(root / "corpus_src", base_url)
    if all(_tree_matches(root / name, files) for name, files in result.trees().items()):
        return f"build/ is up to date (manifest hash {result.manifest_hash})"
    result = build(root / "corpus_src", root, base_url)
    return f"built {len(result.built)} files (manifest hash {result.manifest_hash})"


def _tree_matches(folder: Path, files: dict[str, bytes]) -> bool:
    if not folder.is_dir():
        return False
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    if on_disk != set(files):
        return False
    return all((folder / name).read_bytes() == data for name, data in files.items())


# ------------------------------------------------------------------------------------------ secrets


def dev_secret(prefix: Path) -> tuple[Path, str]:
    """The development secret of a prefix: reused if present, else generated (file mode 0600)."""
    path = prefix / DEV_SECRET_FILE
    if path.exists():
        try:
            return path, read_secret_file(path)[0]
        except SecretError:
            pass
    value = new_secret()
    write_private(path, value + "\n")
    return path, value


# ----------------------------------------------------------------------------------------- running


def wait_ready(host: str, port: int, process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Poll until the port accepts connections or nginx exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def stop_group(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """Fast shutdown (SIGTERM) of the master, then SIGKILL whatever is left of its process group."""
    pgid = process.pid  # started with start_new_session: the master leads its own group
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    process.wait()


def run_foreground(settings: Settings) -> int:
    """Run nginx from the prefix until it exits or this process gets SIGINT, SIGTERM or SIGHUP."""
    process = subprocess.Popen([*nginx_command(settings.prefix), "-g", "daemon off;"], start_new_session=True)
    stopping: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        host = settings.listen if settings.listen not in ("0.0.0.0", "::") else "127.0.0.1"
        if wait_ready(host, settings.port, process, READY_TIMEOUT):
            print(f"corpus serve: ready on {_base(settings)} (nginx master pid {process.pid}); Ctrl-C stops it",
                  file=sys.stderr, flush=True)
        while process.poll() is None:
            try:
                process.wait(0.5)
            except subprocess.TimeoutExpired:
                continue
    finally:
        stop_group(process)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if stopping:
        print(f"corpus serve: stopped ({signal.Signals(stopping[0]).name})", file=sys.stderr)
        return 0
    print(f"corpus serve: nginx exited with status {process.returncode}; see {settings.error_log_path}",
          file=sys.stderr)
    return 1 if process.returncode else 0


def _base(settings: Settings) -> str:
    scheme = "https" if settings.tls else "http"
    host = settings.listen if ":" not in settings.listen else f"[{settings.listen}]"
    return f"{scheme}://{host}:{settings.port}"


def _banner(settings: Settings, secret_note: str, secret_value: str | None, sample: str) -> str:
    base = _base(settings)
    header = f"X-Challenge-Secret: {secret_value}" if secret_value else "X-Challenge-Secret: $(head -1 FILE)"
    return "\n".join([
        f"corpus serve: {base} (prefix {settings.prefix})",
        f"  secret: {secret_note}",
        f"  curl -s -H '{header}' {base}{sample}",
        f"  curl -s {base}{sample}      # no secret: 403 and the way to the proxy",
        f"  logs: {settings.access_log_path} (JSON), {settings.error_log_path}",
        f"  maintenance: corpus maintenance on|off --prefix {settings.prefix}",
        "",
    ])


def _sample_path(root: Path) -> str:
    """An existing agrément for the printed curl line (else the catalogue)."""
    entries = load_manifest(root)["resources"]
    paths = [e["path"] for e in entries if e["kind"] == "resource" and e["path"].startswith("/agrements/")]
    return paths[0] if paths else "/catalogue"


def cmd_serve(args: argparse.Namespace) -> int:
    root: Path = args.root.resolve()
    prefix: Path = (args.prefix or root / DEFAULT_PREFIX).resolve()
    try:
        if not args.no_build:
            print(f"corpus serve: {ensure_build(root, args.base_url.rstrip('/'))}", file=sys.stderr)
        elif not (root / "manifest" / MANIFEST_FILE).exists():
            raise RenderError("--no-build given but there is no build; run 'corpus build'")
        secret_value = None
        if args.secret_file is None and args.secret_env is None:
            secret_file, secret_value = dev_secret(prefix)
            args.secret_file = secret_file
            note = f"development secret {secret_value} (in {secret_file}, mode 0600)"
        else:
            note = f"from {args.secret_file}" if args.secret_file else f"from ${args.secret_env}"
        settings = settings_from_args(args, prefix)
        render_and_write(settings, root)
    except CorpusError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print("corpus serve: corpus_src/ does not compile; fix it, or serve the current build with --no-build",
              file=sys.stderr)
        return 1
    except RenderError as exc:
        print(f"corpus serve: {exc}", file=sys.stderr)
        return 1
    print(_banner(settings, note, secret_value, _sample_path(root)), flush=True)
    return run_foreground(settings)


# ------------------------------------------------------------------------------------- maintenance


def maintenance_flag(prefix: Path) -> Path:
    """The flag file of a rendered prefix (settings.json says where; default PREFIX/maintenance)."""
    return Path(read_settings(prefix)["maintenance_flag"])


def cmd_maintenance(args: argparse.Namespace) -> int:
    prefix: Path = (args.prefix or args.root / DEFAULT_PREFIX).resolve()
    try:
        flag = maintenance_flag(prefix)
    except RenderError as exc:
        print(f"corpus maintenance: {exc}", file=sys.stderr)
        return 1
    if args.state == "on":
        flag.parent.mkdir(parents=True, exist_ok=True)
        flag.touch()
        os.chmod(flag, 0o644)
    elif args.state == "off":
        flag.unlink(missing_ok=True)
    state = "on (503 for every request)" if flag.exists() else "off"
    print(f"corpus maintenance: {state}; flag file {flag}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from generator.cli import add_root_options, base_url_option

    p = sub.add_parser(
        "serve", help="build if needed, then run the vhost in a real nginx in the foreground",
        description="Bring build/ up to date with corpus_src/ (bytes compared, written only if different), "
                    "render the vhost into a private prefix (default run/serve/), and run nginx in the "
                    "foreground on 127.0.0.1. Without --secret-file or --secret-env, a development secret is "
                    "generated once per prefix (PREFIX/dev-secret, mode 0600) and printed. Ctrl-C or SIGTERM "
                    "stops nginx and its workers.")
    add_root_options(p)
    base_url_option(p)
    p.add_argument("--prefix", type=Path, default=None, help="private nginx prefix (default ROOT/run/serve)")
    p.add_argument("--no-build", action="store_true", help="serve build/ as it is, without compiling")
    add_render_options(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "maintenance", help="switch the served corpus to 503 maintenance, or back",
        description="Create (on) or remove (off) the maintenance flag file of a rendered prefix. nginx checks "
                    "it on every request: no reload, no restart. 'status' only reports.")
    add_root_options(p)
    p.add_argument("state", choices=("on", "off", "status"))
    p.add_argument("--prefix", type=Path, default=None, help="rendered prefix (default ROOT/run/serve)")
    p.set_defaults(func=cmd_maintenance)
