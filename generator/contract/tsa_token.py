"""The RFC 3161 token of a Trust Layer proof, verified with the openssl command (spec §4.1 condition 1).

Trust Layer submits the chain hash's 32 bytes (``openssl ts -query -data <bytes> -sha256 -no_nonce``, no
``-cert``) and keeps the authority's reply as ``timestamp_authority.tsr_base64``. So the reply is verified
against those bytes, the authority's CA and, since the reply does not carry it, the authority's certificate;
the time kept is the token's, signed by a third party, never the ``timestamp`` Trust Layer serves.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from generator.base.errors import GeneratorError

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_TIME = re.compile(rf"Time stamp: ({'|'.join(_MONTHS)}) +([0-9]{{1,2}}) ([0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}})"
                   r"(?:\.[0-9]+)? ([0-9]{4}) GMT")
_TIMEOUT = 20.0


class TokenError(GeneratorError):
    """The token does not verify, or cannot be read: one line saying why."""


@dataclass(frozen=True)
class Authority:
    """The timestamp authority a token must come from: its CA bundle and its signing certificate."""

    ca_file: Path
    cert_file: Path | None = None


def openssl_present() -> bool:
    return shutil.which("openssl") is not None


def _openssl(*args: str) -> str:
    try:
        done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=_TIMEOUT, check=False,
                              env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TokenError(f"openssl ts could not run ({type(exc).__name__})") from None
    if done.returncode != 0:
        detail = next((line for line in (done.stderr + done.stdout).splitlines() if "error" in line.lower()),
                      "verification failed")
        raise TokenError(f"openssl ts {args[1]}: {detail.strip()[-200:]}")
    return done.stdout


def token_time(tsr_base64: str, chain_hex: str, authority: Authority) -> datetime:
    """The time of the token over ``chain_hex``'s bytes, once it verifies against ``authority`` (UTC)."""
    try:
        reply = base64.b64decode(tsr_base64, validate=True)
    except (binascii.Error, ValueError):
        raise TokenError("timestamp_authority.tsr_base64: not base64") from None
    with tempfile.TemporaryDirectory(prefix="corpus-tsa-") as folder:
        data, tsr = Path(folder) / "chain.bin", Path(folder) / "reply.tsr"
        data.write_bytes(bytes.fromhex(chain_hex))
        tsr.write_bytes(reply)
        untrusted = ["-untrusted", str(authority.cert_file)] if authority.cert_file else []
        _openssl("ts", "-verify", "-data", str(data), "-in", str(tsr), "-CAfile", str(authority.ca_file),
                 *untrusted)
        text = _openssl("ts", "-reply", "-in", str(tsr), "-text")
    found = _TIME.search(text)
    if found is None:
        raise TokenError("timestamp_authority.tsr_base64: the token verifies but states no time openssl prints")
    month, day, clock, year = found.groups()  # openssl's English month names, whatever the locale
    hour, minute, second = (int(part) for part in clock.split(":"))
    return datetime(int(year), _MONTHS.index(month) + 1, int(day), hour, minute, second, tzinfo=UTC)
