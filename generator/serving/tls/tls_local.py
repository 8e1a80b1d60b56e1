"""Certificates for a local or test topology: throwaway CAs and the certificates they sign.

Two CAs, as in production: the **public** one, which the proxy trusts, signs the frontal's server certificate
(``make_local_tls``); the deployment's **private** one signs the certificates of the link between frontals and
replicas (``make_peer_tls``): each replica's server certificate, named
:data:`~generator.serving.tls.tls_roles.REPLICA_NAME` (which the frontal verifies), and the frontals' client
certificate (which the replicas require). A client is given a CA (``--state-file`` names the public one),
never told to skip verification. Made with the openssl CLI (always present beside nginx), ECDSA P-256 by
default; RSA 2048 on request, for the benchmark that compares their handshake cost. Valid :data:`LOCAL_DAYS`
days and made again once fewer than :data:`~generator.serving.tls.tls_roles.WARN_DAYS` remain, so that a local run
never warns about its own certificates; files kept from an earlier start are checked for what they must do
(:mod:`generator.serving.tls.tls_roles`) and refused, naming the file, when they no longer can.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from generator.base.errors import TlsError
from generator.serving.tls.peer_tls import PeerTLS
from generator.serving.tls.tls_roles import (
    REPLICA_NAME,
    WARN_DAYS,
    InstanceTLS,
    certificates,
    chains_to,
    check_ca,
    check_instance,
    check_key,
    names_host,
    validity,
)
from generator.tracks.model import DEFAULT_BASE_URL

KEY_OPTIONS = {"ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
               "rsa": ["-newkey", "rsa:2048"]}
# REPLICA_NAME (tls_roles): the name every replica certificate carries and every frontal verifies
# (proxy_ssl_name): one name for all replicas, so that a frontal's upstream block needs no name per address.
LOCAL_DAYS = 90
# Named by every local server certificate beside the hosts given: what a client of the default base URL asks.
DEFAULT_HOST = urlsplit(DEFAULT_BASE_URL).hostname or "localhost"
__all__ = ["LocalPeer", "LocalTLS", "make_local_tls", "make_peer_tls"]


@dataclass(frozen=True)
class LocalTLS:
    ca: Path  # the CA certificate a client trusts
    cert: Path  # the server certificate chain (PEM)
    key: Path  # its private key (mode 0600)


@dataclass(frozen=True)
class LocalPeer:
    """The link's files: the private CA, the replicas' server certificate, the frontals' client certificate."""

    ca: Path
    replica_cert: Path
    replica_key: Path
    client_cert: Path
    client_key: Path


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise TlsError(f"openssl {args[0]} failed: {result.stderr.strip()[-500:]}")


def _alt_names(hosts: list[str]) -> str:
    names = []
    for host in hosts:
        try:
            names.append(f"IP:{ipaddress.ip_address(host.strip('[]'))}")
        except ValueError:
            names.append(f"DNS:{host}")
    return ",".join(dict.fromkeys(names))


def _still_valid(files: list[Path], cert: Path, ext: Path, wanted: str) -> bool:
    """Earlier files of a folder: all there, same names and key kind, valid for more than WARN_DAYS days."""
    if not all(p.is_file() for p in [*files, ext]) or ext.read_text("ascii") != wanted:
        return False
    try:
        ends = certificates(cert, str(cert))[0].not_valid_after_utc
    except TlsError:
        return False  # unreadable: made again
    return ends - datetime.now(UTC) > timedelta(days=WARN_DAYS + 1)


def _kept(folder: Path, check: Callable[[], object]) -> None:
    """Files kept from an earlier start must still do their job; one line naming the file otherwise."""
    try:
        check()
    except TlsError as exc:
        raise TlsError(f"{exc}; or remove {folder}: corpus serve makes new ones at its next start") from None


def _check_local(tls: LocalTLS, hosts: list[str]) -> None:
    """The kept CA is a CA, the server certificate is valid, chains to it, names every host and has its key."""
    ca_where = f"{tls.ca} (the CA clients trust)"
    cas = certificates(tls.ca, ca_where)
    check_ca(cas, ca_where)
    validity(cas, ca_where)
    chain = certificates(tls.cert, str(tls.cert))
    validity(chain, str(tls.cert))
    chains_to(chain, cas, str(tls.cert), str(tls.ca))
    check_key(chain[0], tls.key, str(tls.key), str(tls.cert))
    for host in hosts:
        if not names_host(chain[0], host):
            raise TlsError(f"{tls.cert}: does not name {host}")


_MADE = {"tls_cert": "certificate", "tls_key": "key", "ca": "private CA", "cert": "client certificate",
         "key": "client key"}


def _new_ca(folder: Path, kind: str, days: int, name: str) -> tuple[Path, Path]:
    ca, ca_key = folder / "ca.crt", folder / "ca.key"
    _openssl("req", "-x509", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(ca_key), "-out", str(ca),
             "-days", str(days), "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    os.chmod(ca_key, 0o600)
    return ca, ca_key


def _issue(ca: tuple[Path, Path], stem: Path, subject: str, extensions: str, kind: str, days: int) -> None:
    """``stem``.crt and ``stem``.key (0600), signed by ``ca`` with the given extension lines."""
    key, csr, ext = stem.with_suffix(".key"), stem.with_suffix(".csr"), stem.with_suffix(".ext.tmp")
    _openssl("req", "-new", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(key), "-out", str(csr),
             "-subj", f"/CN={subject}")
    ext.write_text(extensions, "ascii")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
             "-out", str(stem.with_suffix(".crt")), "-days", str(days), "-extfile", str(ext))
    os.chmod(key, 0o600)
    csr.unlink()
    ext.unlink()


def _check_kind(kind: str) -> None:
    if kind not in KEY_OPTIONS:
        raise TlsError(f"key kind {kind!r}: 'ec' or 'rsa'")


def make_local_tls(folder: Path, hosts: list[str], kind: str = "ec", days: int = LOCAL_DAYS,
                   reuse: bool = False) -> LocalTLS:
    """A CA and a certificate for ``hosts`` (IP addresses or names, plus localhost and :data:`DEFAULT_HOST`)
    under ``folder``.

    ``reuse``: keep the CA and certificate already in ``folder`` when they name the same hosts and stay
    valid more than WARN_DAYS days, so that a client told to trust the CA keeps trusting it across restarts;
    kept files that cannot work (a CA replaced by a leaf, a key of another pair) are refused.
    """
    _check_kind(kind)
    folder.mkdir(parents=True, exist_ok=True)
    tls = LocalTLS(folder / "ca.crt", folder / "server.crt", folder / "server.key")
    ext = folder / "server.ext"
    named = [*hosts, "localhost", DEFAULT_HOST]
    wanted = (f"# key {kind}\nsubjectAltName={_alt_names(named)}\nbasicConstraints=CA:FALSE\n"
              "extendedKeyUsage=serverAuth\n")
    if reuse and _still_valid([tls.ca, tls.cert, tls.key], tls.cert, ext, wanted):
        _kept(folder, lambda: _check_local(tls, [h.strip("[]") for h in named]))
        return tls
    ca = _new_ca(folder, kind, days, "PROVE IT corpus local CA")
    _issue(ca, folder / "server", "localhost", wanted, kind, days)
    ext.write_text(wanted, "ascii")
    return tls


def make_peer_tls(folder: Path, replica_hosts: list[str], kind: str = "ec", days: int = LOCAL_DAYS,
                  reuse: bool = False, name: str = REPLICA_NAME) -> LocalPeer:
    """A private CA under ``folder``, a server certificate for the replicas (:data:`REPLICA_NAME` and their
    addresses; serverAuth only) and a client certificate for the frontals (clientAuth only).

    The usages keep each certificate to its side: a replica's certificate cannot open a connection to
    another replica, a frontal's client certificate cannot pose as a replica. ``reuse`` as for
    :func:`make_local_tls`. ``name``: another replica name (only to test that a frontal refuses it).
    """
    _check_kind(kind)
    folder.mkdir(parents=True, exist_ok=True)
    peer = LocalPeer(folder / "ca.crt", folder / "replica.crt", folder / "replica.key", folder / "frontal.crt",
                     folder / "frontal.key")
    ext = folder / "peer.ext"
    replica = (f"# key {kind}\nsubjectAltName={_alt_names([name, *replica_hosts])}\n"
               "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    client = "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
    if reuse and _still_valid([peer.ca, peer.replica_cert, peer.replica_key, peer.client_cert, peer.client_key],
                              peer.replica_cert, ext, replica):
        _kept(folder, lambda: _check_peer(peer))
        return peer
    ca = _new_ca(folder, kind, days, "PROVE IT corpus private CA (frontals and replicas)")
    _issue(ca, folder / "replica", name, replica, kind, days)
    _issue(ca, folder / "frontal", "corpus-frontal", client, kind, days)
    ext.write_text(replica, "ascii")
    return peer


def _check_peer(peer: LocalPeer) -> None:
    """The kept link's files: the CA a CA, the replica and client certificates of their side, chained, keyed."""
    link = PeerTLS(peer.ca, peer.client_cert, peer.client_key)
    check_instance(InstanceTLS("replica", peer.replica_cert, peer.replica_key, PeerTLS(peer.ca), None, _MADE))
    check_instance(InstanceTLS("frontal", None, None, link, None, _MADE))
