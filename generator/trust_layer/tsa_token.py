"""The RFC 3161 token of a Trust Layer proof, verified with ``rfc3161-client`` (spec §4.1 condition 1).

Trust Layer asks its authority for a token over the bytes it anchors (``openssl ts -query -data <bytes>
-sha256 -no_nonce``, no ``-cert``): the chain hash's 32 bytes for a 1.2 proof, the batch root's 32 bytes for a
3.x proof. So the token's message imprint must be ``sha256(those bytes)``, and since the reply does not carry
the authority's certificate, the pinned certificate (``--tsa-cert``) and its CA (``--tsa-ca``) are given. The
time kept is the token's, signed by a third party, never the ``timestamp`` Trust Layer serves. The library is
sigstore's RFC 3161 client (PKCS#7 signature, chain at the token's time, critical timeStamping EKU, imprint):
one maintained implementation rather than a parse of ``openssl`` output.

A batch's token is the same for every proof of the batch (up to 250 of them), so each token is verified once
(issue 43): the pinned authority's certificates are loaded into one verifier per run (:func:`_verifier`), and
each token's outcome over the bytes it anchors, its time or why it fails, is kept (:data:`OUTCOMES`). A pool of
processes shares the outcomes through :class:`Outcomes` (``generator/score/batch_tokens.py``), so that a batch
is verified once whatever the number of workers.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from rfc3161_client import TimeStampResponse, VerificationError, VerifierBuilder, decode_timestamp_response

from generator.base.bounded_read import SALT_LIMIT, read_bounded
from generator.base.errors import GeneratorError

PEM_LIMIT = 64 * SALT_LIMIT  # a CA bundle of a few certificates


class TokenError(GeneratorError):
    """The token does not verify, or cannot be read: one line saying why."""


@dataclass(frozen=True)
class Authority:
    """The timestamp authority a token must come from: its CA bundle and its signing certificate."""

    ca_file: Path
    cert_file: Path | None = None

    def pems(self) -> tuple[bytes, bytes | None]:
        """The PEM bytes of the CA bundle and of the certificate (kept in a published anchor), checked."""
        try:
            ca = read_bounded(self.ca_file, PEM_LIMIT)
            cert = read_bounded(self.cert_file, PEM_LIMIT) if self.cert_file else None
        except OSError as exc:
            raise TokenError(f"{exc.filename or self.ca_file}: cannot read the authority's PEM file "
                             f"({exc.strerror or exc})") from None
        check_authority(ca, cert, str(self.ca_file))
        return ca, cert


def _certificates(data: bytes, what: str) -> list[x509.Certificate]:
    try:
        found = x509.load_pem_x509_certificates(data)
    except ValueError:
        raise TokenError(f"{what}: not PEM certificates") from None
    return found


def check_authority(ca_pem: bytes, cert_pem: bytes | None, what: str = "--tsa-ca") -> None:
    """Refuse unusable pinned PEMs before any proof is judged: an operator's mistake must be one line, never
    every participant's proof turned invalid."""
    if not _certificates(ca_pem, what):
        raise TokenError(f"{what}: holds no certificate")
    if cert_pem is not None and len(_certificates(cert_pem, "--tsa-cert")) != 1:
        raise TokenError("--tsa-cert: expected exactly one PEM certificate")


def decode(tsr_base64: str) -> TimeStampResponse:
    """``timestamp_authority.tsr_base64`` decoded as a TimeStampResp."""
    try:
        return decode_timestamp_response(base64.b64decode(tsr_base64, validate=True))
    except (binascii.Error, ValueError):
        raise TokenError("timestamp_authority.tsr_base64: not the base64 of an RFC 3161 TimeStampResp") from None


Outcome = datetime | str  # a token's time, or why it fails (the TokenError's message)
TokenKey = tuple[str, bytes, bytes, bytes | None, str]  # the token, the bytes it anchors, the authority, --tsa-ca


class Outcomes:
    """Each token's outcome, computed once: ``outcome(key, verify)`` returns the one kept, else verifies and
    keeps it. This one lives in a process; a pool shares another (``score/batch_tokens.py``)."""

    LIMIT = 1 << 16  # tokens kept: far more than a season's batches; beyond, forgotten and verified again

    def __init__(self) -> None:
        self.kept: dict[TokenKey, Outcome] = {}
        self.verified = 0  # how many tokens this process verified (the benchmarks report it)

    def outcome(self, key: TokenKey, verify: Callable[[], Outcome]) -> Outcome:
        found = self.kept.get(key)
        if found is None:
            found = verify()
            self.verified += 1
            if len(self.kept) >= self.LIMIT:
                self.kept.clear()
            self.kept[key] = found
        return found


OUTCOMES = Outcomes()


def use_outcomes(outcomes: Outcomes) -> None:
    """Keep the tokens' outcomes in ``outcomes`` from now on (a pool's worker shares them with the others)."""
    global OUTCOMES
    OUTCOMES = outcomes


@functools.lru_cache(maxsize=8)
def _verifier(ca_pem: bytes, cert_pem: bytes | None, what: str) -> Callable[[TimeStampResponse, bytes], bool]:
    """The pinned authority's certificates loaded once, as one verifier (it keeps no state between tokens)."""
    roots = _certificates(ca_pem, what)
    if not roots:
        raise TokenError(f"{what}: holds no certificate")
    builder = VerifierBuilder(roots=roots)
    if cert_pem is not None:
        certs = _certificates(cert_pem, "--tsa-cert")
        if len(certs) != 1:
            raise TokenError(f"--tsa-cert: expected one certificate, found {len(certs)}")
        builder = builder.tsa_certificate(certs[0])
    return builder.build().verify_message


def verified_time(tsr_base64: str, anchored: bytes, ca_pem: bytes, cert_pem: bytes | None,
                  what: str = "--tsa-ca") -> datetime:
    """The time of the token once it verifies: signed by the pinned authority, imprint ``sha256(anchored)``.

    Verified once per token and authority (:data:`OUTCOMES`): every proof of a batch carries the same token
    over the same root, and gets the same time or the same reason."""
    found = OUTCOMES.outcome((tsr_base64, anchored, ca_pem, cert_pem, what),
                             lambda: _outcome(tsr_base64, anchored, ca_pem, cert_pem, what))
    if isinstance(found, str):
        raise TokenError(found)
    return found


def _outcome(tsr_base64: str, anchored: bytes, ca_pem: bytes, cert_pem: bytes | None, what: str) -> Outcome:
    try:
        return _verified_time(tsr_base64, anchored, ca_pem, cert_pem, what)
    except TokenError as exc:
        return str(exc)


def _verified_time(tsr_base64: str, anchored: bytes, ca_pem: bytes, cert_pem: bytes | None,
                   what: str) -> datetime:
    response = decode(tsr_base64)
    verify = _verifier(ca_pem, cert_pem, what)
    try:
        verify(response, anchored)
    except VerificationError as exc:
        detail = str(exc)
        if "messages" in detail:
            detail = (f"its message imprint is not sha256 of the anchored {len(anchored)} bytes "
                      f"({anchored.hex()[:16]}…): the token is over something else")
        raise TokenError(f"timestamp_authority.tsr_base64: does not verify against the pinned authority: "
                         f"{detail}") from None
    except ValueError as exc:
        raise TokenError(f"timestamp_authority.tsr_base64: cannot be verified: {exc}") from None
    when = response.tst_info.gen_time
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def token_time(tsr_base64: str, anchored_hex: str, authority: Authority) -> datetime:
    """The time of the token over ``anchored_hex``'s bytes, once it verifies against ``authority`` (UTC)."""
    ca, cert = authority.pems()
    return verified_time(tsr_base64, bytes.fromhex(anchored_hex), ca, cert, str(authority.ca_file))
