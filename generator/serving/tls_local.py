"""Certificates for a local or test topology: a throwaway CA and a server certificate it signs.

A client is given the CA (``--state-file`` names it), never told to skip verification: it checks the
frontal exactly as the Trust Layer proxy checks the production one. Made with the openssl CLI (always
present beside nginx), ECDSA P-256 by default; RSA 2048 on request, for the benchmark that compares
their handshake cost.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from generator.serving.nginx_settings import RenderError

KEY_OPTIONS = {"ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
               "rsa": ["-newkey", "rsa:2048"]}


@dataclass(frozen=True)
class LocalTLS:
    ca: Path  # the CA certificate a client trusts
    cert: Path  # the server certificate chain (PEM)
    key: Path  # its private key (mode 0600)


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RenderError(f"openssl {args[0]} failed: {result.stderr.strip()[-500:]}")


def _still_valid(tls: LocalTLS, ext: Path, wanted: str) -> bool:
    """An earlier certificate of ``folder``: same names, same key kind, valid for at least another day."""
    if not all(p.is_file() for p in (tls.ca, tls.cert, tls.key, ext)) or ext.read_text("ascii") != wanted:
        return False
    result = subprocess.run(["openssl", "x509", "-checkend", "86400", "-noout", "-in", str(tls.cert)],
                            capture_output=True, check=False)
    return result.returncode == 0


def make_local_tls(folder: Path, hosts: list[str], kind: str = "ec", days: int = 7,
                   reuse: bool = False) -> LocalTLS:
    """A CA and a certificate for ``hosts`` (IP addresses or names, plus localhost) under ``folder``.

    ``reuse``: keep the CA and certificate already in ``folder`` when they name the same hosts and stay
    valid another day, so that a client told to trust the CA keeps trusting it across restarts.
    """
    if kind not in KEY_OPTIONS:
        raise RenderError(f"key kind {kind!r}: 'ec' or 'rsa'")
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = folder / "ca.crt", folder / "ca.key"
    cert, key, csr = folder / "server.crt", folder / "server.key", folder / "server.csr"
    names = []
    for host in [*hosts, "localhost"]:
        try:
            names.append(f"IP:{ipaddress.ip_address(host.strip('[]'))}")
        except ValueError:
            names.append(f"DNS:{host}")
    ext = folder / "server.ext"
    wanted = (f"# key {kind}\nsubjectAltName={','.join(dict.fromkeys(names))}\nbasicConstraints=CA:FALSE\n"
              "extendedKeyUsage=serverAuth\n")
    if reuse and _still_valid(LocalTLS(ca, cert, key), ext, wanted):
        return LocalTLS(ca, cert, key)
    _openssl("req", "-x509", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(ca_key), "-out", str(ca),
             "-days", str(days), "-subj", "/CN=PROVE IT corpus local CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    _openssl("req", "-new", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(key), "-out", str(csr),
             "-subj", "/CN=localhost")
    ext.write_text(wanted, "ascii")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
             "-out", str(cert), "-days", str(days), "-extfile", str(ext))
    for private in (key, ca_key):
        os.chmod(private, 0o600)
    csr.unlink()
    return LocalTLS(ca, cert, key)
