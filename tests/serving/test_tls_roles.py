"""TLS files that parse but cannot work: refused before anything is rendered or started, one class per test.

Real certificates, made at run time with ``cryptography`` (any validity dates, usages and names), each
class checked three ways: the check itself (one line naming the option and the file), ``render-nginx``
(exit 1, that line, no prefix written) and, for the files ``serve --replicas`` keeps in its prefix, a
restart that reuses them (exit 1, no nginx started). Positive controls: what a deployment uses passes.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from nginx_server import build_copy, free_port, processes_of

from generator.base.errors import TlsError
from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.serving.tls.peer_tls import PeerTLS
from generator.serving.tls.tls_local import make_peer_tls
from generator.serving.tls.tls_roles import WARN_DAYS, InstanceTLS, check_instance

NOW = dt.datetime.now(dt.UTC)
HOST = "corpus.arkforge.tech"  # the server name of the test builds (their manifest's base URL)
SERVER, CLIENT = ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH


@dataclass
class Made:
    cert: Path
    key: Path
    obj: x509.Certificate
    private: ec.EllipticCurvePrivateKey


def _write(folder: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Made:
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / f"{stem}.crt", folder / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    os.chmod(key_path, 0o600)
    return Made(cert_path, key_path, cert, key)


def make(folder: Path, stem: str, *, issuer: Made | None = None, ca: bool = False, sign: bool = True,
         names: tuple[str, ...] = (), usage: tuple[x509.ObjectIdentifier, ...] = (), start_days: int = -1,
         end_days: int = 365) -> Made:
    """A certificate and its key: a CA (``ca``; ``sign`` False drops keyCertSign) or a leaf signed by ``issuer``
    naming ``names`` with the extendedKeyUsage ``usage``, valid from ``start_days`` to ``end_days`` from now."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, stem)])
    builder = (x509.CertificateBuilder().subject_name(subject)
               .issuer_name(issuer.obj.subject if issuer else subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(NOW + dt.timedelta(days=start_days))
               .not_valid_after(NOW + dt.timedelta(days=end_days))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=not sign, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=sign, crl_sign=sign, encipher_only=False, decipher_only=False),
            critical=True)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]),
                                        critical=False)
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(usage)), critical=False)
    cert = builder.sign(issuer.private if issuer else key, hashes.SHA256())
    return _write(folder, stem, cert, key)


@dataclass
class Files:
    """A deployment's files, all good: the private CA, a replica's, the frontal's client and public ones."""

    ca: Made
    replica: Made
    client: Made
    public: Made
    other_ca: Made
    folder: Path

    def frontal(self, **change: Path) -> InstanceTLS:
        values = {"tls_cert": self.public.cert, "tls_key": self.public.key, "ca": self.ca.cert,
                  "cert": self.client.cert, "key": self.client.key, **change}
        return InstanceTLS("frontal", values["tls_cert"], values["tls_key"],
                           PeerTLS(values["ca"], values["cert"], values["key"]), HOST)

    def replica_of(self, **change: Path) -> InstanceTLS:
        values = {"tls_cert": self.replica.cert, "tls_key": self.replica.key, "ca": self.ca.cert, **change}
        return InstanceTLS("replica", values["tls_cert"], values["tls_key"], PeerTLS(values["ca"]), HOST)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    folder = tmp_path_factory.mktemp("tls")
    ca = make(folder, "private-ca", ca=True)
    public_ca = make(folder, "public-ca", ca=True)
    return Files(ca=ca, replica=make(folder, "replica", issuer=ca, names=("corpus-replica",), usage=(SERVER,)),
                 client=make(folder, "frontal", issuer=ca, usage=(CLIENT,)),
                 public=make(folder, "public", issuer=public_ca, names=(HOST,), usage=(SERVER,)),
                 other_ca=make(folder, "other-ca", ca=True), folder=folder)


# (class, which instance, the file changed: option -> how to make it, what the line says)
Change = Callable[[Files], dict[str, Path]]
CASES: list[tuple[str, str, Change, str]] = [
    ("a leaf given as the peer CA", "frontal", lambda f: {"ca": f.replica.cert},
     "is not a CA certificate (no basicConstraints CA:TRUE): a leaf given as the CA"),
    ("a CA without keyCertSign", "replica", lambda f: {"ca": make(f.folder, "nosign", ca=True, sign=False).cert},
     "is a CA without keyCertSign in its keyUsage"),
    ("an expired peer CA", "replica", lambda f: {"ca": make(f.folder, "old-ca", ca=True, start_days=-30,
                                                             end_days=-1).cert}, "expired on"),
    ("an expired replica certificate", "replica",
     lambda f: {"tls_cert": (m := make(f.folder, "old-replica", issuer=f.ca, names=("corpus-replica",),
                                       usage=(SERVER,), start_days=-30, end_days=-2)).cert, "tls_key": m.key},
     "expired on"),
    ("a certificate not valid yet", "frontal",
     lambda f: {"tls_cert": (m := make(f.folder, "future", issuer=f.other_ca, names=(HOST,), start_days=3)).cert,
                "tls_key": m.key}, "not valid before"),
    ("a replica certificate not naming corpus-replica", "replica",
     lambda f: {"tls_cert": (m := make(f.folder, "misnamed", issuer=f.ca, names=("replica-1",),
                                       usage=(SERVER,))).cert, "tls_key": m.key},
     "does not name corpus-replica (it names replica-1)"),
    ("a replica certificate of another CA", "replica",
     lambda f: {"tls_cert": (m := make(f.folder, "stranger", issuer=f.other_ca, names=("corpus-replica",),
                                       usage=(SERVER,))).cert, "tls_key": m.key}, "not signed by --peer-ca"),
    ("a client certificate as the replica's", "replica",
     lambda f: {"tls_cert": (m := make(f.folder, "client-as-replica", issuer=f.ca, names=("corpus-replica",),
                                       usage=(CLIENT,))).cert, "tls_key": m.key}, "no serverAuth"),
    ("a serverAuth-only certificate as --peer-cert", "frontal",
     lambda f: {"cert": f.replica.cert, "key": f.replica.key}, "no clientAuth in its extendedKeyUsage"),
    ("an expired frontal client certificate", "frontal",
     lambda f: {"cert": (m := make(f.folder, "old-client", issuer=f.ca, usage=(CLIENT,), start_days=-30,
                                   end_days=-1)).cert, "key": m.key}, "expired on"),
    ("a client certificate of another CA", "frontal",
     lambda f: {"cert": (m := make(f.folder, "other-client", issuer=f.other_ca, usage=(CLIENT,))).cert,
                "key": m.key}, "not signed by --peer-ca"),
    ("a public certificate of another name", "frontal",
     lambda f: {"tls_cert": (m := make(f.folder, "other-host", issuer=f.other_ca, names=("corpus.example",))).cert,
                "tls_key": m.key}, f"does not name {HOST} (it names corpus.example)"),
    ("an expired public certificate", "frontal",
     lambda f: {"tls_cert": (m := make(f.folder, "old-public", issuer=f.other_ca, names=(HOST,), start_days=-90,
                                       end_days=-1)).cert, "tls_key": m.key}, "expired on"),
    ("a key of another certificate", "frontal", lambda f: {"tls_key": f.client.key},
     "does not match --tls-cert"),
    ("a client key of another certificate", "frontal", lambda f: {"key": f.public.key},
     "does not match --peer-cert"),
]
OPTION = {"tls_cert": "--tls-cert", "tls_key": "--tls-key", "ca": "--peer-ca", "cert": "--peer-cert",
          "key": "--peer-key"}


def _blamed(change: dict[str, Path], says: str) -> tuple[str, Path]:
    """The option a case's line names: the key when the key is what is wrong, else the certificate."""
    if "does not match" in says:
        name = next(n for n in ("tls_key", "key") if n in change)
    else:
        name = next(n for n in ("ca", "tls_cert", "cert") if n in change)
    return OPTION[name], change[name]


def _instance(files: Files, role: str, change: dict[str, Path]) -> InstanceTLS:
    return files.frontal(**change) if role == "frontal" else files.replica_of(**change)


@pytest.mark.parametrize(("case", "role", "change", "says"), CASES, ids=[c[0] for c in CASES])
def test_a_tls_file_that_cannot_work_is_one_line(files: Files, case: str, role: str, change: Change,
                                                 says: str) -> None:
    changed = change(files)
    with pytest.raises(TlsError) as caught:
        check_instance(_instance(files, role, changed))
    option, path = _blamed(changed, says)
    message = str(caught.value)
    assert message.startswith(f"{option} {path}: ") and says in message and "\n" not in message, message


def test_the_files_of_a_deployment_pass(files: Files) -> None:
    """Positive control: a frontal's and a replica's files as docs/operating.md makes them, no warning."""
    assert check_instance(files.frontal()) == []
    assert check_instance(files.replica_of()) == []


def test_a_wildcard_and_an_intermediate_pass(files: Files) -> None:
    """A public certificate for *.arkforge.tech, and a replica certificate signed by an intermediate CA that
    follows it in its file (the chain nginx sends)."""
    wildcard = make(files.folder, "wildcard", issuer=files.other_ca, names=("*.arkforge.tech",), usage=(SERVER,))
    assert check_instance(files.frontal(tls_cert=wildcard.cert, tls_key=wildcard.key)) == []
    middle = make(files.folder, "intermediate", issuer=files.ca, ca=True)
    leaf = make(files.folder, "chained", issuer=middle, names=("corpus-replica",), usage=(SERVER,))
    leaf.cert.write_bytes(leaf.cert.read_bytes() + middle.cert.read_bytes())
    assert check_instance(files.replica_of(tls_cert=leaf.cert, tls_key=leaf.key)) == []
    alone = make(files.folder, "unchained", issuer=middle, names=("corpus-replica",), usage=(SERVER,))
    with pytest.raises(TlsError, match="not signed by --peer-ca"):  # the intermediate left out
        check_instance(files.replica_of(tls_cert=alone.cert, tls_key=alone.key))


def test_a_certificate_ending_soon_is_a_warning(files: Files) -> None:
    soon = make(files.folder, "soon", issuer=files.other_ca, names=(HOST,), end_days=WARN_DAYS - 10)
    warnings = check_instance(files.frontal(tls_cert=soon.cert, tls_key=soon.key))
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: --tls-cert {soon.cert}: expires in ")
    assert "renew it before then" in warnings[0]


# ------------------------------------------------------------------------------------ the commands


@pytest.fixture(scope="module")
def snapshot() -> Iterator[Path]:
    with build_copy("corpus-tls-roles-") as (root, _manifest):
        write_private(root.parent / "secret", new_secret() + "\n")
        yield root


def _render_args(root: Path, prefix: Path, instance: InstanceTLS) -> list[str]:
    args = ["render-nginx", "--root", str(root), "--prefix", str(prefix), "--port", str(free_port()),
            "--secret-file", str(root.parent / "secret"), "--role", instance.role, "--workers", "1",
            "--tls-cert", str(instance.tls_cert), "--tls-key", str(instance.tls_key),
            "--peer-ca", str(instance.peer.ca)]
    if instance.role == "frontal":
        args += ["--replica", "127.0.0.2:8081", "--peer-cert", str(instance.peer.cert),
                 "--peer-key", str(instance.peer.key)]
    return args


@pytest.mark.parametrize(("case", "role", "change", "says"), CASES, ids=[c[0] for c in CASES])
def test_render_nginx_refuses_it_and_writes_nothing(files: Files, snapshot: Path, case: str, role: str,
                                                    change: Change, says: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    changed = change(files)
    prefix = snapshot.parent / f"prefix-{abs(hash(case))}"
    assert main(_render_args(snapshot, prefix, _instance(files, role, changed))) == 1
    err = capsys.readouterr().err
    option, path = _blamed(changed, says)
    assert err.startswith(f"corpus render-nginx: {option} {path}: ") and says in err and err.count("\n") == 1, err
    assert not (prefix / "conf" / "nginx.conf").exists()


def test_render_nginx_renders_good_files_and_says_a_warning(files: Files, snapshot: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    soon = make(files.folder, "soon-render", issuer=files.other_ca, names=(HOST,), end_days=5)
    prefix = snapshot.parent / "prefix-good"
    assert main(_render_args(snapshot, prefix, files.frontal(tls_cert=soon.cert, tls_key=soon.key))) == 0
    err = capsys.readouterr().err
    assert f"corpus render-nginx: warning: --tls-cert {soon.cert}: expires in 4 days" in err
    assert "nginx -t passed" in err and (prefix / "conf" / "nginx.conf").exists()


def test_render_systemd_refuses_a_rendered_prefix_whose_ca_became_a_leaf(
        files: Files, snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ca = tmp_path / "ca.crt"
    shutil.copy(files.ca.cert, ca)
    prefix = snapshot.parent / "prefix-unit"
    assert main(_render_args(snapshot, prefix, files.replica_of(ca=ca))) == 0
    capsys.readouterr()
    shutil.copy(files.replica.cert, ca)  # replaced after the render
    assert main(["render-systemd", "--prefix", str(prefix), "--output", str(tmp_path / "units")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"corpus render-systemd: --peer-ca {ca.resolve()}: ") and "not a CA" in err
    assert err.count("\n") == 1 and not (tmp_path / "units").exists()


# Files serve --replicas keeps in PREFIX/tls/peer and reuses at the next start, replaced by ones that cannot work.
REUSED: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("ca.crt replaced by a leaf", lambda peer: shutil.copy(peer / "frontal.crt", peer / "ca.crt"), "ca.crt",
     "is not a CA certificate"),
    ("ca.crt replaced by another CA", lambda peer: shutil.copy(make(peer / "x", "another", ca=True).cert,
                                                               peer / "ca.crt"), "replica.crt",
     "not signed by private CA"),
    ("an expired frontal.crt", lambda peer: _expired_client(peer), "frontal.crt", "expired on"),
]


def _expired_client(peer: Path) -> None:
    key = serialization.load_pem_private_key((peer / "ca.key").read_bytes(), None)
    ca = x509.load_pem_x509_certificate((peer / "ca.crt").read_bytes())
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    old = make(peer / "x", "frontal", issuer=Made(peer / "ca.crt", peer / "ca.key", ca, key), usage=(CLIENT,),
               start_days=-30, end_days=-1)
    shutil.copy(old.cert, peer / "frontal.crt")
    shutil.copy(old.key, peer / "frontal.key")


@pytest.mark.parametrize(("case", "spoil", "blamed", "says"), REUSED, ids=[c[0] for c in REUSED])
def test_serve_replicas_refuses_reused_files_that_cannot_work(
        snapshot: Path, case: str, spoil: Callable[[Path], None], blamed: str, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    prefix = snapshot.parent / f"serve-{abs(hash(case))}"
    peer = prefix / "tls" / "peer"
    make_peer_tls(peer, ["127.0.0.2"], reuse=True)  # what the first start made
    spoil(peer)
    code = main(["serve", "--root", str(snapshot), "--no-build", "--replicas", "1", "--prefix", str(prefix),
                 "--port", str(free_port()), "--replica-port", str(free_port()), "--workers", "1"])
    err = capsys.readouterr().err
    line = [e for e in err.splitlines() if "serve:" in e][-1]
    assert code == 1 and f"{peer / blamed}: " in line and says in line, err
    assert f"or remove {peer}: corpus serve makes new ones at its next start" in line
    assert not (prefix / "replica-1" / "conf").exists() and processes_of(prefix) == []
