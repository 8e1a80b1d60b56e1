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

from generator.nginx_settings import RenderError

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


def make_local_tls(folder: Path, hosts: list[str], kind: str = "ec", days: int = 7) -> LocalTLS:
    """A CA and a certificate for ``hosts`` (IP addresses or names, plus localhost) under ``folder``."""
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
    _openssl("req", "-x509", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(ca_key), "-out", str(ca),
             "-days", str(days), "-subj", "/CN=PROVE IT corpus local CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    _openssl("req", "-new", *KEY_OPTIONS[kind], "-nodes", "-keyout", str(key), "-out", str(csr),
             "-subj", "/CN=localhost")
    ext = folder / "server.ext"
    ext.write_text(f"subjectAltName={','.join(dict.fromkeys(names))}\nbasicConstraints=CA:FALSE\n"
                   "extendedKeyUsage=serverAuth\n", "ascii")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
             "-out", str(cert), "-days", str(days), "-extfile", str(ext))
    for private in (key, ca_key):
        os.chmod(private, 0o600)
    csr.unlink()
    return LocalTLS(ca, cert, key)
