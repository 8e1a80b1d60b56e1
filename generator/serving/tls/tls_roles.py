"""What each TLS file must *do* for its role, checked before anything is rendered or started.

:mod:`generator.serving.tls.tls_files` proves that a file is a readable PEM of the right kind; this module
proves that it can work where it is used, since nginx accepts (``nginx -t`` passes) certificates that
then fail every handshake, and a frontal over such a link answers 503 to everything:

- a private CA (``--peer-ca``) is a CA: basicConstraints CA:TRUE, and keyCertSign when it has a keyUsage;
- every certificate is within its validity (a warning when it ends within :data:`WARN_DAYS` days);
- a replica's certificate names :data:`REPLICA_NAME`, may serve
  (serverAuth) and chains to the private CA; the frontal's client certificate may be a client
  (clientAuth) and chains to it;
- a public certificate (a frontal's, or a TLS replica's without the link) names the server name;
- each key matches its certificate.

Each problem is one line naming the option, the file and what to do. Parsed with ``cryptography``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from generator.base.bounded_read import read_bounded
from generator.base.errors import TlsError
from generator.serving.tls.peer_tls import PeerTLS
from generator.serving.tls.tls_files import TLS_FILE_LIMIT

WARN_DAYS = 30  # a certificate ending sooner is said at every render and start
REPLICA_NAME = "corpus-replica"  # the name every replica certificate carries
# The option that names each file in a message; serve passes its own words for the files it made.
OPTIONS = {"tls_cert": "--tls-cert", "tls_key": "--tls-key", "ca": "--peer-ca", "cert": "--peer-cert",
           "key": "--peer-key"}


@dataclass(frozen=True)
class InstanceTLS:
    """The TLS files one nginx instance reads, and what they are for."""

    role: str  # "replica" or "frontal"
    tls_cert: Path | None
    tls_key: Path | None
    peer: PeerTLS
    server_name: str | None  # the name clients ask for (None: not known here, not checked)
    options: Mapping[str, str] | None = None  # default OPTIONS


def certificates(path: Path, where: str) -> list[x509.Certificate]:
    """Every certificate of a PEM file (a chain or a bundle), first one first."""
    try:
        found = x509.load_pem_x509_certificates(read_bounded(path, TLS_FILE_LIMIT))
    except (ValueError, OSError):
        raise TlsError(f"{where}: corrupt: cannot read its certificates; give a PEM certificate file") from None
    if not found:
        raise TlsError(f"{where}: holds no certificate; give a PEM certificate file")
    return found


def _day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def validity(certs: list[x509.Certificate], where: str, now: datetime | None = None) -> list[str]:
    """Refuse a certificate not yet or no longer valid; a warning for one that ends within WARN_DAYS."""
    now, warnings = now or datetime.now(UTC), []
    for index, cert in enumerate(certs):
        which = f" (certificate {index + 1} of the file)" if len(certs) > 1 else ""
        if now < cert.not_valid_before_utc:
            raise TlsError(f"{where}: not valid before {_day(cert.not_valid_before_utc)}{which}; check this "
                              "host's clock, or give a certificate valid now")
        if now > cert.not_valid_after_utc:
            raise TlsError(f"{where}: expired on {_day(cert.not_valid_after_utc)}{which}; renew it")
        left = cert.not_valid_after_utc - now
        if left < timedelta(days=WARN_DAYS):
            warnings.append(f"warning: {where}: expires in {left.days} days ({_day(cert.not_valid_after_utc)})"
                            f"{which}; renew it before then")
    return warnings


def _extension(cert: x509.Certificate, kind: type[x509.ExtensionType]) -> x509.ExtensionType | None:
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def check_ca(certs: list[x509.Certificate], where: str) -> None:
    """Every certificate of a CA file can sign certificates: what nginx trusts when it checks a peer."""
    for cert in certs:
        constraints = _extension(cert, x509.BasicConstraints)
        subject = cert.subject.rfc4514_string()
        if not isinstance(constraints, x509.BasicConstraints) or not constraints.ca:
            raise TlsError(f"{where}: {subject!r} is not a CA certificate (no basicConstraints CA:TRUE): a "
                              "leaf given as the CA; give the private CA's own certificate (ca.crt)")
        usage = _extension(cert, x509.KeyUsage)
        if isinstance(usage, x509.KeyUsage) and not usage.key_cert_sign:
            raise TlsError(f"{where}: {subject!r} is a CA without keyCertSign in its keyUsage: it signs no "
                              "certificate; make the CA with keyUsage=critical,keyCertSign")


def names(cert: x509.Certificate) -> list[str]:
    """The names a certificate answers for, as OpenSSL's host check reads them: its subjectAltName DNS names
    (else its common name), and its subjectAltName IP addresses."""
    alt = _extension(cert, x509.SubjectAlternativeName)
    dns: list[str] = []
    ips: list[str] = []
    if isinstance(alt, x509.SubjectAlternativeName):
        dns, ips = alt.get_values_for_type(x509.DNSName), [str(a) for a in alt.get_values_for_type(x509.IPAddress)]
    common = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    return [*(dns or common), *ips]


def _matches(pattern: str, host: str) -> bool:
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern.startswith("*.") and "." in host:
        return host.split(".", 1)[1] == pattern[2:]
    return pattern == host


def names_host(cert: x509.Certificate, host: str) -> bool:
    """Whether a client verifying ``host`` accepts the certificate (one-label wildcards, as browsers do)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return any(_matches(name, host) for name in names(cert))
    return any(name == str(address) for name in names(cert))


def _check_name(cert: x509.Certificate, host: str, where: str, fix: str) -> None:
    if not names_host(cert, host):
        held = ", ".join(names(cert)) or "no name"
        raise TlsError(f"{where}: does not name {host} (it names {held}); {fix}")


def _check_usage(cert: x509.Certificate, usage: x509.ObjectIdentifier, where: str, fix: str) -> None:
    """A certificate with an extendedKeyUsage must list ``usage`` (without one, OpenSSL allows any)."""
    found = _extension(cert, x509.ExtendedKeyUsage)
    if isinstance(found, x509.ExtendedKeyUsage) and usage not in found:
        held = ", ".join(getattr(u, "_name", u.dotted_string) for u in found) or "nothing"
        wanted = "clientAuth" if usage == ExtendedKeyUsageOID.CLIENT_AUTH else "serverAuth"
        raise TlsError(f"{where}: no {wanted} in its extendedKeyUsage (it allows {held}); {fix}")


def chains_to(chain: list[x509.Certificate], cas: list[x509.Certificate], where: str, ca_where: str) -> None:
    """The first certificate of ``chain`` is signed by a CA of ``cas``, directly or through the certificates
    that follow it in its file."""
    current, rest = chain[0], chain[1:]
    for _step in range(len(chain)):
        for ca in cas:
            try:
                current.verify_directly_issued_by(ca)
                return
            except (ValueError, TypeError, InvalidSignature):
                continue
        issuer = next((c for c in rest if c.subject == current.issuer), None)
        if issuer is None:
            break
        try:
            current.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            break
        current, rest = issuer, [c for c in rest if c is not issuer]
    raise TlsError(f"{where}: not signed by {ca_where} (issued by {chain[0].issuer.rfc4514_string()!r}); "
                      "give a certificate that CA signed, or that CA")


def check_key(cert: x509.Certificate, key_path: Path, where: str, cert_where: str) -> None:
    """The private key is the one of the certificate (nginx would refuse it in four lines of its own)."""
    try:
        key = serialization.load_pem_private_key(read_bounded(key_path, TLS_FILE_LIMIT), password=None)
    except (ValueError, TypeError, OSError):
        raise TlsError(f"{where}: corrupt: cannot read the private key; give a PEM private key file") from None
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*spki) != cert.public_key().public_bytes(*spki):
        raise TlsError(f"{where}: does not match {cert_where} (another key pair); give the key made with "
                          "that certificate")


def check_instance(tls: InstanceTLS, now: datetime | None = None) -> list[str]:
    """Every TLS file of one instance checked for what it must do; the warnings (expiring soon) returned.

    The files have passed :func:`~generator.serving.tls.tls_files.check_tls_file` (their form) first.
    """
    now = now or datetime.now(UTC)
    opt, peer, warnings = tls.options or OPTIONS, tls.peer, []
    ca_where = f"{opt['ca']} {peer.ca}"
    cas = certificates(peer.ca, ca_where) if peer.ca is not None else []
    if cas:
        check_ca(cas, ca_where)
        warnings += validity(cas, ca_where, now)
    if tls.tls_cert is not None:
        where = f"{opt['tls_cert']} {tls.tls_cert}"
        chain = _leaf_chain(tls.tls_cert, tls.tls_key, where, f"{opt['tls_key']} {tls.tls_key}", now, warnings)
        if tls.role == "replica" and cas:
            fix = f"a replica's certificate names {REPLICA_NAME}, the name every frontal verifies"
            _check_name(chain[0], REPLICA_NAME, where, fix)
            _check_usage(chain[0], ExtendedKeyUsageOID.SERVER_AUTH, where, "a replica's certificate serves TLS: "
                         "issue it with extendedKeyUsage=serverAuth")
            chains_to(chain, cas, where, ca_where)
        elif tls.server_name and "*" not in tls.server_name and tls.server_name != "_":
            _check_name(chain[0], tls.server_name, where, "clients ask for the server name: give that host's "
                        "certificate, or --server-name")
            _check_usage(chain[0], ExtendedKeyUsageOID.SERVER_AUTH, where, "give a server certificate")
    if peer.cert is not None:
        where = f"{opt['cert']} {peer.cert}"
        chain = _leaf_chain(peer.cert, peer.key, where, f"{opt['key']} {peer.key}", now, warnings)
        _check_usage(chain[0], ExtendedKeyUsageOID.CLIENT_AUTH, where, "the replicas refuse it: issue the "
                     "frontal's client certificate with extendedKeyUsage=clientAuth")
        if cas:
            chains_to(chain, cas, where, ca_where)
    return warnings


def _leaf_chain(cert: Path, key: Path | None, where: str, key_where: str, now: datetime,
                warnings: list[str]) -> list[x509.Certificate]:
    """A certificate file's chain, each within its validity (warnings appended), and its key matching the leaf."""
    chain = certificates(cert, where)
    warnings += validity(chain, where, now)
    if key is not None:
        check_key(chain[0], key, key_where, where)
    return chain
