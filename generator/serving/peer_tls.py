"""The link between frontals and replicas: mutual TLS under the deployment's private CA, or plain HTTP.

A replica listens with TLS (its ``--tls-cert``, signed by the private CA and naming
:data:`~generator.serving.tls_local.REPLICA_NAME`) and accepts only clients holding a certificate of
that CA: the frontals. A client without one gets no HTTP answer at all, whatever secret it sends (the
connection is closed). A frontal verifies each replica's certificate and name, and presents its own
client certificate (``--peer-cert``/``--peer-key``); its upstream connections are kept alive, so a
handshake is paid per kept connection, not per call. Plain HTTP on the link is a development option
only (``--plain-replica``).

Kept in ``PREFIX/conf/settings.json`` under ``peer_tls`` (written by the render), so that a re-render
from the settings alone (``corpus reload``, ``corpus release``) keeps the link as it was. This module
reads that key itself, strictly: :mod:`generator.serving.nginx_settings` ignores keys it does not know.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.bounded_read import MIB, ReadRefused, read_bounded
from generator.base.errors import RenderError
from generator.serving.tls_files import check_tls_file

KEY = "peer_tls"  # the key of settings.json


@dataclass(frozen=True)
class PeerTLS:
    """``ca`` None: plain HTTP on the link (development). A replica uses ``ca`` only (its own certificate is
    its ``tls_cert``); a frontal uses all three."""

    ca: Path | None = None
    cert: Path | None = None  # frontal: its client certificate for the replicas
    key: Path | None = None

    @property
    def plain(self) -> bool:
        return self.ca is None

    def resolved(self) -> PeerTLS:
        return PeerTLS(*(p.resolve() if p is not None else None for p in (self.ca, self.cert, self.key)))

    def saved(self) -> dict[str, str | None]:
        return {name: str(p) if p is not None else None for name, p in
                (("ca", self.ca), ("cert", self.cert), ("key", self.key))}


PLAIN = PeerTLS()


def check_peer(peer: PeerTLS, role: str, has_tls: bool) -> None:
    """The files a role needs for the link, each checked (:func:`check_tls_file`); one line otherwise."""
    if peer.plain:
        if peer.cert is not None or peer.key is not None:
            raise RenderError("--peer-cert and --peer-key need --peer-ca (the private CA of the replicas)")
        return
    if role == "replica":
        if peer.cert is not None or peer.key is not None:
            raise RenderError("--peer-cert/--peer-key are a frontal's client certificate; a replica's own "
                              "certificate is --tls-cert/--tls-key")
        if not has_tls:
            raise RenderError("a replica with --peer-ca listens with TLS: give --tls-cert and --tls-key (its "
                              "certificate, signed by the private CA)")
    elif peer.cert is None or peer.key is None:
        raise RenderError("a frontal with --peer-ca needs its client certificate: --peer-cert and --peer-key")
    for option, path, kind in (("--peer-ca", peer.ca, "ca"), ("--peer-cert", peer.cert, "certificate"),
                               ("--peer-key", peer.key, "key")):
        if path is not None:
            check_tls_file(path, option, kind)


def saved_peer(prefix: Path) -> PeerTLS:
    """The link as ``PREFIX/conf/settings.json`` recorded it: plain when the prefix was never rendered, or was
    rendered before mutual TLS existed. Strict: the key of the wrong type is one line naming the file."""
    path = prefix / "conf" / "settings.json"
    again = "render the prefix again (corpus render-nginx)"
    try:
        data = read_bounded(path, MIB)
    except FileNotFoundError:
        return PLAIN
    except ReadRefused as exc:
        raise RenderError(f"{exc}; {again}") from None
    except OSError as exc:
        raise RenderError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        document: Any = json.loads(data.decode("utf-8"))
    except ValueError:
        raise RenderError(f"{path}: not valid JSON; {again}") from None
    if not isinstance(document, dict):
        raise RenderError(f"{path}: expected a JSON object of settings; {again}")
    value = document.get(KEY)
    if value is None:
        return PLAIN
    if not isinstance(value, dict) or set(value) - {"ca", "cert", "key"} or \
            not all(v is None or (isinstance(v, str) and v) for v in value.values()):
        raise RenderError(f"{path}: {KEY}: expected an object of paths (ca, cert, key; each a string or null); "
                          f"{again}")
    return PeerTLS(*(Path(value[name]) if value.get(name) else None for name in ("ca", "cert", "key")))
