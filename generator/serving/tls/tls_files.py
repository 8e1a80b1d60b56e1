"""The TLS files an instance is given (CA, certificate, key): one line naming the file and what to do.

Checked before anything is rendered, so that a wrong file never reaches ``nginx -t`` (whose message
takes four lines and names a staging folder) and never leaves a half-written prefix: missing, a
symbolic link to nothing, a folder, a FIFO or a device, unreadable, empty, not the PEM block expected
(a key given as the certificate...), corrupt (``cryptography``, which parses with OpenSSL as nginx does,
cannot read it), an encrypted key (nginx would stop to ask for a passphrase), or a private key that
other accounts may read. What a readable file must then do for its role is
:mod:`generator.serving.tls.tls_roles`'s job.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.base.bounded_read import ReadRefused, read_bounded
from generator.base.errors import TlsError, shown_path

TLS_FILE_LIMIT = 1024 * 1024  # a chain of a few certificates is a few KiB
_BEGIN = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----")
_CERTIFICATE = {b"CERTIFICATE", b"TRUSTED CERTIFICATE"}
_KEY = {b"PRIVATE KEY", b"EC PRIVATE KEY", b"RSA PRIVATE KEY"}

def _key(data: bytes) -> Any:
    return serialization.load_pem_private_key(data, password=None)


# What each kind of file must hold, and the parser that proves it can be read.
KINDS: dict[str, tuple[str, set[bytes], Callable[[bytes], Any]]] = {
    "certificate": ("a PEM certificate", _CERTIFICATE, x509.load_pem_x509_certificates),
    "ca": ("a PEM CA certificate", _CERTIFICATE, x509.load_pem_x509_certificates),
    "key": ("a PEM private key", _KEY, _key)}


def _kind_of_node(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_tls_file(path: Path, option: str, kind: str) -> None:
    """Raise :class:`TlsError` ``OPTION FILE: what is wrong; what to do`` unless ``path`` is a usable ``kind``
    (``certificate``, ``ca`` or ``key``)."""
    wanted, blocks, parse = KINDS[kind]
    where = f"{option} {shown_path(path)}"
    fix = f"give {wanted} file"
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise TlsError(f"{where}: no such file; {fix}") from None
    except OSError as exc:
        raise TlsError(f"{where}: cannot read: {exc.strerror}") from None
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise TlsError(f"{where}: a symbolic link to nothing ({os.readlink(path)}); {fix}") from None
    except OSError as exc:
        raise TlsError(f"{where}: cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise TlsError(f"{where}: {_kind_of_node(mode)}, not a PEM file; {fix}")
    if kind == "key" and mode & 0o037:
        raise TlsError(f"{where}: mode {stat.S_IMODE(mode):04o}: a private key must not be readable by other "
                          f"accounts; run: chmod 600 {path}")
    try:
        data = read_bounded(path, TLS_FILE_LIMIT)
    except ReadRefused as exc:
        raise TlsError(f"{where}: {exc.strerror}; {fix}") from None
    except PermissionError:
        raise TlsError(f"{where}: not readable by this user; fix its owner or mode") from None
    except OSError as exc:
        raise TlsError(f"{where}: cannot read: {exc.strerror}") from None
    if not data.strip():
        raise TlsError(f"{where}: empty; {fix}")
    found = set(_BEGIN.findall(data))
    if kind == "key" and (b"ENCRYPTED PRIVATE KEY" in found or b"Proc-Type: 4,ENCRYPTED" in data):
        raise TlsError(f"{where}: an encrypted key (nginx would stop to ask for its passphrase); "
                          f"decrypt it: openssl pkey -in {path} -out KEY, mode 0600")
    if not found & blocks:
        held = ", ".join(sorted(b.decode("ascii").lower() for b in found)) or "no PEM block"
        raise TlsError(f"{where}: not {wanted} (holds {held}); {fix}")
    try:  # password=None: never a prompt, whatever the file holds
        parse(data)
    except (ValueError, TypeError):
        raise TlsError(f"{where}: corrupt: cannot read {wanted}; {fix}") from None
