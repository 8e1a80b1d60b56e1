"""systemd units for a frontal and a replica (``corpus render-systemd``), from ``deploy/systemd/*.j2``.

A deployment runs each nginx role as its own service, as an unprivileged user, in a sandbox that
leaves it nothing to write but its logs and temporary files. The unit is rendered rather than copied
because its paths (prefix, build, nginx, the ``corpus`` tool) differ on every host, and a typo in a
hand-edited unit shows only at the next reboot. What each role's unit runs:

- frontal: ``nginx -t``, then nginx in the foreground; reload through ``corpus reload``, which
  re-renders the prefix and waits until the new configuration answers (outside the sandbox, which keeps
  ``conf/`` read-only for nginx);
- replica: the build proof first (a tampered build never starts), then the same.

The TLS files (the certificate and key, the private CA and the frontal's client certificate of the
link) are named in the unit (``AssertFileNotEmpty=``: a start without one of them fails naming it) and
counted among the paths the sandbox must let nginx read; by default they are the ones of the prefix's
settings.json. Those of a prefix rendered here are checked first, as its render checked them
(:func:`check_prefix_tls`): a unit is never written for files that cannot work.

The build root and the manifest hash a replica must serve are not written in the unit: the commands read
them from ``PREFIX/conf/settings.json``, which ``corpus release`` rewrites, so a release or a rollback
never needs a new unit.

A replica prefix containing ``%i`` gives a template unit (``corpus-replica@.service``): one file, N
instances (``systemctl enable --now corpus-replica@1 corpus-replica@2``).
"""

from __future__ import annotations

import pwd
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.errors import GeneratorError, RenderError
from generator.serving.rendering.nginx_render import check_tls, first_track_name
from generator.serving.rendering.nginx_settings import SettingsFile, SettingsFileError, read_settings
from generator.serving.rendering.templates import environment

RUNBOOK = Path(__file__).resolve().parents[3] / "docs" / "operating.md"
ROLES = ("frontal", "replica")
DEFAULT_USER = "corpus"
# The corpus sub-commands a unit runs, in one place. Both read what they need from PREFIX/conf/settings.json,
# which every render and release rewrites: the build root and the manifest hash a replica must serve.
VERIFY_BUILD = ("verify-build", "--prefix", "{prefix}")
RELOAD = ("reload", "--prefix", "{prefix}")
RUNUSER = "/usr/sbin/runuser"  # util-linux: runs the reload as the service's account, outside the sandbox
_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
# Characters a path may hold in a unit: systemd splits Exec lines on spaces and expands % and $.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9._+@/-]*")
_HOMES = ("/home", "/root", "/run/user")


class UnitError(GeneratorError):
    """The unit cannot be rendered safely; the message says which option to fix."""


@dataclass(frozen=True)
class UnitSettings:
    """Where things are on the host that will run the unit."""

    role: str
    prefix: str  # may contain %i (replica template unit)
    root: str | None = None  # replica: the folder it serves (only to open it when it lies in a home folder)
    user: str = DEFAULT_USER
    group: str | None = None  # default: the user's name
    nginx: str = "/usr/sbin/nginx"
    corpus: str = "/usr/local/bin/corpus"
    read_write: tuple[str, ...] = ()  # extra writable folders (logs kept outside the prefix)
    tls_files: tuple[str, ...] = ()  # certificate, key, private CA, client certificate: read at start

    @property
    def template(self) -> bool:
        return "%i" in self.prefix

    @property
    def unit_name(self) -> str:
        if self.role == "frontal":
            return "corpus-frontal.service"
        return "corpus-replica@.service" if self.template else "corpus-replica.service"


def _path(value: str, what: str, *, instance: bool = False) -> str:
    """An absolute path that systemd reads back as written (no space, quote, ``$`` or stray ``%``)."""
    plain = value.replace("%i", "") if instance else value
    if not _SAFE_PATH.fullmatch(plain) or "//" in plain or "/../" in f"{plain}/":
        raise UnitError(f"{what} {value!r}: an absolute path of letters, digits and . _ + @ - only"
                        + (" (and %i for the instance)" if instance else ""))
    return value.rstrip("/") or "/"


def _command(*argv: str) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def _nginx(settings: UnitSettings, prefix: str, *extra: str) -> str:
    return _command(settings.nginx, "-p", f"{prefix}/", "-c", f"{prefix}/conf/nginx.conf",
                    "-e", f"{prefix}/logs/error.log", *extra)


def context(s: UnitSettings) -> dict[str, Any]:
    """Every value the templates use, checked for systemd's syntax."""
    if s.role not in ROLES:
        raise UnitError(f"role {s.role!r}: one of {', '.join(ROLES)}")
    if s.template and s.role != "replica":
        raise UnitError("%i in --prefix: only replicas are template units (one frontal per host)")
    for name, what in ((s.user, "--user"), (s.group or s.user, "--group")):
        if not _NAME.fullmatch(name) or name == "root":
            raise UnitError(f"{what} {name!r}: an unprivileged account name (lower case, not root)")
    prefix = _path(s.prefix, "--prefix", instance=True)
    _path(s.nginx, "--nginx")
    corpus = _path(s.corpus, "--corpus")
    read_write = [f"{prefix}/logs", f"{prefix}/tmp",
                  *(_path(p, "--read-write", instance=True) for p in s.read_write)]
    tls_files = [_path(p, "--tls-file", instance=True) for p in s.tls_files]
    paths = [prefix, *read_write, *tls_files]
    values: dict[str, Any] = {
        "unit_name": s.unit_name, "role": s.role, "template": s.template, "prefix": prefix,
        "user": s.user, "group": s.group or s.user, "read_write": read_write,
        "nginx_test": _nginx(s, prefix, "-t", "-q"),
        "nginx_run": _nginx(s, prefix, "-g", "daemon off;"),
        "reload": "+" + _command(RUNUSER, "-u", s.user, "--", corpus, *(a.format(prefix=prefix) for a in RELOAD)),
        "runbook": RUNBOOK.as_uri(),
        "tls_files": tls_files,
    }
    if s.role == "replica":
        values["verify_build"] = _command(corpus, *(a.format(prefix=prefix) for a in VERIFY_BUILD))
        if s.root:
            paths.append(_path(s.root, "--root", instance=True))
    values["protect_home"] = "read-only" if any(p == h or p.startswith(h + "/") for p in paths for h in _HOMES) \
        else "yes"
    return values


def render_unit(settings: UnitSettings) -> str:
    """The unit file's text."""
    values = context(settings)
    return environment().get_template(f"corpus-{settings.role}.service.j2").render(values)


def _saved_settings(prefix: Path) -> SettingsFile | None:
    """A rendered prefix's settings file (role, build root, logs, the link), or None when it is not rendered
    (yet) here or not readable by this user; a settings.json that is there but corrupt is a
    :class:`SettingsFileError`."""
    try:
        return read_settings(prefix)
    except SettingsFileError:
        raise
    except (RenderError, OSError):  # not rendered here (yet), or conf/ not readable by this user
        return None


def _default_corpus() -> str:
    beside = Path(sys.executable).with_name("corpus")
    if beside.is_file():
        return str(beside)
    return shutil.which("corpus") or "/usr/local/bin/corpus"


def _default_nginx() -> str:
    return shutil.which("nginx") or "/usr/sbin/nginx"


def _saved_tls_files(saved: SettingsFile) -> tuple[str, ...]:
    """The TLS files a rendered prefix reads: its certificate and key, and the link's CA and client files."""
    peer = saved.peer
    found = (saved.settings.tls_cert, saved.settings.tls_key, peer.ca, peer.cert, peer.key)
    return tuple(dict.fromkeys(str(p) for p in found if p is not None))


def unit_settings(prefix: str, role: str | None = None, root: str | None = None, *, user: str = DEFAULT_USER,
                  group: str | None = None, nginx: str | None = None, corpus: str | None = None,
                  read_write: tuple[str, ...] = (), tls_files: tuple[str, ...] = ()) -> UnitSettings:
    """The unit's settings: what is not given is read from the prefix's settings.json when it is rendered
    here (role, build root, logs kept outside the prefix, TLS files), else the defaults of this host."""
    saved_file = None if "%i" in prefix else _saved_settings(Path(prefix))
    saved = saved_file.settings if saved_file else None
    role = role or (saved.role if saved else None)
    if role is None:
        raise UnitError(f"--role frontal|replica (no rendered settings in {prefix}/conf/settings.json)")
    root = root or (str(saved.root) if saved else None)
    extra = [*read_write]
    for log in (saved.access_log, saved.error_log) if saved else ():
        folder = str(log.parent) if log else None
        if folder and not folder.startswith(prefix.rstrip("/") + "/logs"):
            extra.append(folder)
    if not tls_files and saved_file is not None:
        tls_files = _saved_tls_files(saved_file)
    return UnitSettings(role=role, prefix=prefix, root=root, user=user, group=group,
                        nginx=nginx or _default_nginx(), corpus=corpus or _default_corpus(),
                        read_write=tuple(extra), tls_files=tls_files)


def check_prefix_tls(prefix: str) -> list[str]:
    """The TLS files of a prefix rendered on this host, checked for what they must do (as its render did);
    the warnings returned. A template prefix (``%i``) or one rendered elsewhere: nothing to check here."""
    saved = None if "%i" in prefix else _saved_settings(Path(prefix))
    if saved is None:
        return []
    settings = saved.settings

    def name() -> str | None:
        try:
            return first_track_name(settings)
        except (GeneratorError, OSError):  # the build is not readable here: the name given, if any
            return settings.server_name or None

    return check_tls(settings, saved.peer, name)


def account_exists(user: str) -> bool:
    """Whether ``user`` is an account of this host (the unit may be meant for another one)."""
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True
