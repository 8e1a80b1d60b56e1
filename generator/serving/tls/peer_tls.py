"""The link between frontals and replicas: mutual TLS under the deployment's private CA, or plain HTTP.

A replica listens with TLS (its ``--tls-cert``, signed by the private CA and naming
:data:`~generator.serving.tls.tls_roles.REPLICA_NAME`) and accepts only clients holding a certificate of
that CA: the frontals. A client without one gets no HTTP answer at all, whatever secret it sends (the
connection is closed). A frontal verifies each replica's certificate and name, and presents its own
client certificate (``--peer-cert``/``--peer-key``); its upstream connections are kept alive, so a
handshake is paid per kept connection, not per call. Plain HTTP on the link is a development option
only (``--plain-replica``).

Kept in ``PREFIX/conf/settings.json`` under ``peer_tls`` (written by the render), so that a re-render
from the settings alone (``corpus reload``, ``corpus release``) keeps the link as it was; that file's one
reader, :class:`generator.serving.rendering.nginx_settings.SettingsFile`, parses the key with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.base.errors import TlsError
from generator.serving.tls.tls_files import check_tls_file

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
            raise TlsError("--peer-cert and --peer-key need --peer-ca (the private CA of the replicas)")
        return
    if role == "replica":
        if peer.cert is not None or peer.key is not None:
            raise TlsError("--peer-cert/--peer-key are a frontal's client certificate; a replica's own "
                              "certificate is --tls-cert/--tls-key")
        if not has_tls:
            raise TlsError("a replica with --peer-ca listens with TLS: give --tls-cert and --tls-key (its "
                              "certificate, signed by the private CA)")
    elif peer.cert is None or peer.key is None:
        raise TlsError("a frontal with --peer-ca needs its client certificate: --peer-cert and --peer-key")
    for option, path, kind in (("--peer-ca", peer.ca, "ca"), ("--peer-cert", peer.cert, "certificate"),
                               ("--peer-key", peer.key, "key")):
        if path is not None:
            check_tls_file(path, option, kind)
