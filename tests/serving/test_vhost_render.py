"""Rendering the vhost: secret sources and shapes, nginx quoting, refusals, and `nginx -t` on the output."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jinja2
import pytest
from nginx_server import ROOT, NginxServer, build_copy, private_dir, private_folder
from trackfix import GENERIQUE, scratch_checkout

from generator.base.errors import DeployError, RenderError
from generator.base.secret_values import (
    SecretError,
    check_shape,
    new_secret,
    parse_secrets,
    read_secret_env,
    read_secret_file,
    write_private,
)
from generator.cli.main import main
from generator.serving.instances.nginx_process import NginxProcess, nginx_command
from generator.serving.instances.nginx_write import write
from generator.serving.rendering.nginx_render import render
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.rendering.nginx_syntax import MAX_TOKEN, NginxSyntaxError, quote_path, quote_text
from generator.serving.rendering.templates import NGINX_TEMPLATES as TEMPLATES
from generator.serving.rendering.templates import environment
from generator.serving.tls.tls_local import make_local_tls

# ---------------------------------------------------------------------------------------- secrets

BAD_SECRETS = ["short-secret-15", "has space inside-the-secret", 'quote"quote-quote-quote',
               "back\\slash-slash-slash", "dollar$dollar-dollar-dollar", "accentué-accentué-accentué",
               "tab\tinside-the-secret-value", "semi;colon-semi-colon-semi", "x" * 513, ""]


@pytest.mark.parametrize("value", BAD_SECRETS, ids=range(len(BAD_SECRETS)))
def test_badly_shaped_secrets_are_refused_without_being_quoted(value: str) -> None:
    with pytest.raises(SecretError) as caught:
        check_shape(value, "where")
    if value:
        assert value not in str(caught.value)


def test_secret_file_rules(tmp_path: Path) -> None:
    good = new_secret()
    assert len(good) >= 16 and check_shape(good, "x") == good
    path = tmp_path / "secrets"
    write_private(path, f"# comment\n\n{good}\n  {good}  \nother-secret-0123456789\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_secret_file(path) == [good, "other-secret-0123456789"]
    os.chmod(path, 0o640)
    with pytest.raises(SecretError, match="chmod 600"):
        read_secret_file(path)
    with pytest.raises(SecretError, match="not found"):
        read_secret_file(tmp_path / "missing")
    with pytest.raises(SecretError, match="no secret"):
        parse_secrets("# only a comment\n", "f")


def test_oversized_secret_file_is_refused_before_analysis(tmp_path: Path) -> None:
    """A huge one-line file is refused by its size, without scanning it to word the shape error."""
    path = tmp_path / "secrets"
    write_private(path, "x" * (64 * 1024) + "\n")
    with pytest.raises(SecretError, match=r"secrets: larger than 64 KiB, not a secrets file$"):
        read_secret_file(path)
    write_private(path, "# a comment\n" * 5000 + new_secret() + "\n")  # 60 KiB: still a secrets file
    assert len(read_secret_file(path)) == 1


def test_bad_character_hint_names_the_first_bad_character() -> None:
    """The shape error names the first character outside the alphabet, found by one search (the old hint
    ran a regex per character: 130 s on a 300 MB value; that figure belongs to the note, not to a test)."""
    with pytest.raises(SecretError, match=r"has 50002 characters, including U\+00E9\)$"):
        check_shape("a" * 50_000 + "é" + "ü", "where")


def test_secret_file_must_live_outside_the_repository(tmp_path: Path) -> None:
    fake_repo = tmp_path / "repo"
    inside, run = fake_repo / "build" / "conformite" / "s", fake_repo / "run" / "s"
    for path in (inside, run):
        write_private(path, new_secret() + "\n")
    with pytest.raises(SecretError, match="outside the repository"):
        read_secret_file(inside, fake_repo)
    assert read_secret_file(run, fake_repo)  # run/ is git-ignored
    assert "/run/" in (ROOT / ".gitignore").read_text()


def test_secret_env() -> None:
    a, b = new_secret(), new_secret()
    assert read_secret_env("S", {"S": f" {a}, {b}\n{a}"}) == [a, b]
    with pytest.raises(SecretError, match="not set"):
        read_secret_env("S", {})
    with pytest.raises(SecretError):
        read_secret_env("S", {"S": "short"})


# --------------------------------------------------------------------------------- nginx quoting


def test_quote_path_refuses_variables_and_controls() -> None:
    assert quote_path('/a b/"c"') == '"/a b/\\"c\\""'
    for bad in ("/a/$uri", "/a\nb", "/a\x00b"):
        with pytest.raises(NginxSyntaxError):
            quote_path(bad)


def test_quote_text_refuses_what_nginx_could_not_hold() -> None:
    with pytest.raises(NginxSyntaxError, match="at most"):
        quote_text(b"x" * (MAX_TOKEN + 1))
    with pytest.raises(NginxSyntaxError, match="exactly once"):
        quote_text(b"PP PP", "PP", "uri")


@pytest.fixture(scope="module")
def literal_nginx() -> Iterator[tuple[int, dict[str, bytes]]]:
    """A minimal nginx whose locations return hostile literals through quote_text (and one via ${uri})."""
    bodies = {"/dollar": b'{"a": "$uri ${uri} $$ $1 \\\\ \\" \\n"}\n',
              "/controls": b'tab\there\r\nCRLF "quotes" \'single\' {braces} ;semi #hash \\back\\\\slash\n',
              "/utf8": "caractères accentués, « guillemets », €\n".encode()}
    folder = private_dir("corpus-literal-")
    try:
        port = _free_port()
        locations = "".join(f"location = {p} {{ return 200 {quote_text(b)}; }}\n" for p, b in bodies.items())
        locations += f"location /echo/ {{ return 200 {quote_text(b'path=PH;', 'PH', 'uri')}; }}\n"
        (folder / "conf").mkdir()
        (folder / "logs").mkdir()
        (folder / "conf" / "nginx.conf").write_text(
            f"pid {folder}/logs/nginx.pid; error_log {folder}/logs/error.log;\n"
            "events {}\nhttp {\n access_log off; default_type text/plain;\n"
            + "".join(f" {n}_temp_path {folder}/tmp_{n};\n" for n in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                         "scgi"))
            + ' geo $corpus_dollar { default "$"; }\n'
            f" server {{ listen 127.0.0.1:{port}; {locations} }}\n}}\n", "utf-8")
        with NginxProcess(Settings(root=folder, prefix=folder, port=port)):
            yield port, bodies
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _free_port() -> int:
    from nginx_server import free_port

    return free_port()


def test_quote_text_round_trips_through_nginx(literal_nginx: tuple[int, dict[str, bytes]]) -> None:
    import http.client

    port, bodies = literal_nginx
    for path, body in [*bodies.items(), ("/echo/x-1", b"path=/echo/x-1;")]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", path)
        resp = conn.getresponse()
        assert (resp.status, resp.read()) == (200, body), path
        conn.close()


# ---------------------------------------------------------------------------------------- render


@pytest.fixture(scope="module")
def snapshot() -> Iterator[Path]:
    with build_copy("corpus-render-") as (root, _manifest):
        yield root


@pytest.fixture
def work() -> Iterator[Path]:
    """A private folder nginx workers can traverse (pytest's tmp_path is under a 0700 folder)."""
    with private_folder("corpus-render-work-") as folder:
        yield folder


def _settings(snapshot: Path, work: Path, **extra: Any) -> Settings:
    secret_file = work / "secret"
    if not secret_file.exists():
        write_private(secret_file, new_secret() + "\n")
    return Settings(root=snapshot, prefix=work / "prefix", port=18099, secret_file=secret_file, **extra)


def test_rendered_config_passes_nginx_t_and_keeps_the_secret_in_the_private_include(
        snapshot: Path, work: Path) -> None:
    settings = _settings(snapshot, work)
    secret = read_secret_file(settings.secret_file)[0]  # type: ignore[arg-type]
    assert main(["render-nginx", "--plain-replica",
                 "--root", str(snapshot), "--prefix", str(settings.prefix), "--port", "18099",
                 "--secret-file", str(settings.secret_file)]) == 0
    conf = settings.conf_dir
    assert stat.S_IMODE(settings.secrets_conf.stat().st_mode) == 0o600
    assert f'"~^{re.escape(secret)}$" 1;' in settings.secrets_conf.read_text()
    for public in (settings.nginx_conf, settings.corpus_conf, settings.settings_file):
        for form in (secret, re.escape(secret)):
            assert form not in public.read_text(), public
    saved = json.loads(settings.settings_file.read_text())
    assert saved["maintenance_flag"] == str(settings.prefix / "maintenance")
    # nginx -t again, explicitly, on what was written
    result = subprocess.run(nginx_command(settings.prefix, "-t"), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in conf.iterdir()) == ["corpus-secrets.conf", "corpus.conf", "nginx.conf",
                                                      "settings.json"]


def test_secrets_from_the_environment(snapshot: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = new_secret(), new_secret()
    monkeypatch.setenv("CORPUS_TEST_SECRETS", f"{a} {b}")
    settings = replace(_settings(snapshot, work), secret_file=None, secret_env="CORPUS_TEST_SECRETS")
    rendered = render(settings)
    assert rendered.secrets_conf.count(" 1;") == 2 and re.escape(b) in rendered.secrets_conf
    assert a not in json.dumps(rendered.settings) and rendered.settings["secrets_accepted"] == 2


def test_tls_config_passes_nginx_t(snapshot: Path, work: Path) -> None:
    tls = make_local_tls(work / "tls", ["127.0.0.1"])
    settings = _settings(snapshot, work, tls_cert=tls.cert, tls_key=tls.key)
    write(settings, render(settings))
    text = settings.corpus_conf.read_text()
    assert "listen 127.0.0.1:18099 ssl default_server;" in text and "ssl_certificate_key" in text
    result = subprocess.run(nginx_command(settings.prefix, "-t"), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("change", "message"), [
    ({"tls_cert": Path("/x.pem")}, "both --tls-cert and --tls-key"),
    ({"secret_env": "CORPUS_TEST_SECRET"}, "exactly one secret source"),
    ({"listen": "127.0.0.1; evil"}, "not an address"),
    ({"server_name": "a b"}, "server name"),
    ({"worker_processes": "0"}, "worker processes"),
    ({"access_log": Path("/tmp/$uri")}, "cannot hold '\\$'"),
])
def test_render_refuses_unsafe_settings(snapshot: Path, work: Path, change: dict[str, Any],
                                        message: str) -> None:
    with pytest.raises(RenderError, match=message):
        render(_settings(snapshot, work, **change))


def _copy(snapshot: Path, work: Path) -> Path:
    copy = work / "copy"
    shutil.copytree(snapshot, copy)
    return copy


def test_render_refuses_a_build_that_differs_from_the_manifest(snapshot: Path, work: Path) -> None:
    copy = _copy(snapshot, work)
    (copy / "build" / "conformite" / "_systeme" / "403.json").write_bytes(b'{"tampered": true}\n')
    with pytest.raises(DeployError, match="/_systeme/403"):  # not the proven release: nothing rendered
        render(_settings(copy, work))


def _rewrite_manifest(manifest_file: Path, manifest: dict[str, object]) -> None:
    """A consistent tampered manifest: its ``manifest.sha256`` follows, so only the render's checks refuse it."""
    manifest_file.write_text(json.dumps(manifest))
    digest = hashlib.sha256(manifest_file.read_bytes()).hexdigest()
    (manifest_file.parent / "manifest.sha256").write_text(digest + "\n")


def test_render_refuses_a_declared_absent_that_is_not_the_template(snapshot: Path, work: Path) -> None:
    copy = _copy(snapshot, work)
    manifest_file = copy / "manifest" / "conformite" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    entry = next(e for e in manifest["resources"] if e["kind"] == "absent")
    data = (copy / "build" / "conformite" / entry["file"]).read_bytes().replace(b"Aucune", b"Nulle")
    (copy / "build" / "conformite" / entry["file"]).write_bytes(data)
    entry["sha256"], entry["length"] = hashlib.sha256(data).hexdigest(), len(data)
    _rewrite_manifest(manifest_file, manifest)
    with pytest.raises(RenderError, match=re.escape(entry["path"])):
        render(_settings(copy, work))


def test_render_refuses_a_manifest_without_a_required_systeme_body(snapshot: Path, work: Path) -> None:
    copy = _copy(snapshot, work)
    manifest_file = copy / "manifest" / "conformite" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["resources"] = [e for e in manifest["resources"] if e["path"] != "/_systeme/503"]
    _rewrite_manifest(manifest_file, manifest)
    with pytest.raises(DeployError, match="503"):  # build/ holds a body the manifest lacks: no proven release
        render(_settings(copy, work))


@pytest.mark.parametrize("folder", ["build", "manifest", "season", "corpus_src", "season_src", "nginx",
                                    "link-to-build"])
def test_prefix_inside_a_served_or_tracked_folder_is_refused(folder: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The secrets include must never land in build/ (served) or a tracked folder, even through a symlink."""
    with build_copy("corpus-render-prefix-") as (root, _manifest):
        secret_file = root.parent / "secret"
        write_private(secret_file, new_secret() + "\n")
        (root / "link-to-build").symlink_to(root / "build" / "conformite")
        before = sorted(p.relative_to(root) for p in root.rglob("*"))
        prefix = root / folder / "p"
        code = main(["render-nginx", "--plain-replica",
                     "--root", str(root), "--prefix", str(prefix), "--port", "18099",
                     "--secret-file", str(secret_file)])
        err = capsys.readouterr().err
        inside = "build" if folder == "link-to-build" else folder
        assert code == 1 and err.count("\n") == 1 and f"inside {inside}/ of the checkout" in err
        assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
        assert main(["render-nginx", "--plain-replica",
                     "--root", str(root), "--prefix", str(root / "run" / "p"), "--port", "18099",
                     "--secret-file", str(secret_file)]) == 0  # run/ (serve's default) stays usable


@pytest.mark.parametrize("case", ["folder", "missing", "unreadable"])
def test_tls_files_that_are_not_readable_files_are_one_line(
        snapshot: Path, work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    tls = make_local_tls(work / "tls", ["127.0.0.1"])
    key = {"folder": work / "tls", "missing": work / "none.pem", "unreadable": work / "locked.pem"}[case]
    if case == "unreadable":
        key.write_text("x")
        os.chmod(key, 0)
        if os.access(key, os.R_OK):
            pytest.skip("root reads any file")
    settings = _settings(snapshot, work)
    code = main(["render-nginx", "--plain-replica",
                 "--root", str(snapshot), "--prefix", str(settings.prefix), "--port", "18099",
                 "--secret-file", str(settings.secret_file), "--tls-cert", str(tls.cert), "--tls-key", str(key)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith(f"corpus render-nginx: --tls-key {key}: "), err
    assert not settings.prefix.exists()


def test_cli_reports_bad_secret_file_without_quoting_it(snapshot: Path, work: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    secret_file = work / "secret"
    secret_file.write_text("bad secret with spaces in it\n")
    os.chmod(secret_file, 0o600)
    assert main(["render-nginx", "--plain-replica", "--root", str(snapshot), "--prefix", str(work / "p"),
                 "--secret-file", str(secret_file)]) == 1
    err = capsys.readouterr().err
    assert "characters among" in err and "bad secret" not in err


# ------------------------------------------------------------------------------------- templates


def test_templates_are_strict_and_every_snippet_is_used() -> None:
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ missing }}").render()
    included = set()
    for template in TEMPLATES.rglob("*.j2"):
        included |= set(re.findall(r'include "(snippets/[^"]+)"', template.read_text()))
    snippets = {p.relative_to(TEMPLATES).as_posix() for p in (TEMPLATES / "snippets").glob("*.j2")}
    assert snippets == included
    for snippet in snippets:  # one concern per snippet, each saying why
        assert (TEMPLATES / snippet).read_text().lstrip().startswith("#"), snippet


def test_secret_regex_escaping_in_nginx() -> None:
    """Punctuation in a secret is literal: '.' or '+' must not act as regex operators."""
    tricky = "a.b+c~d/e=f-g_h.i+jj"
    near = ["aXb+c~d/e=f-g_h.i+jj", "a.bbc~d/e=f-g_h.i+jj", "a.b+c~d/e=f-g_h.i+jjj", "a.b+c~d/e=f-g_h.i+j",
            "A.b+c~d/e=f-g_h.i+jj", "a.b+c~d/e=f-g_hXi+jj", "a.b+c~d/e=f-g_h.iiijj"]
    other = new_secret()
    with NginxServer(secrets=[tricky, other]) as server:
        path = "/catalogue"
        assert server.request(path, secret=tricky).status == 200
        assert server.request(path, secret=other).status == 200
        for miss in near:
            assert server.request(path, secret=miss).status == 403, miss


@pytest.mark.skipif(os.geteuid() != 0, reason="workers drop privileges only when nginx starts as root")
def test_render_refuses_a_build_the_unprivileged_workers_cannot_reach(snapshot: Path, work: Path) -> None:
    hidden = work / "hidden"
    hidden.mkdir(mode=0o700)
    os.chmod(hidden, 0o700)
    shutil.copytree(snapshot, hidden / "root")
    with pytest.raises(RenderError, match=f"{hidden}: not traversable"):
        render(_settings(hidden / "root", work))


@pytest.mark.skipif(os.geteuid() != 0, reason="workers drop privileges only when nginx starts as root")
def test_render_refuses_a_second_track_the_unprivileged_workers_cannot_reach(work: Path) -> None:
    """Every track's build is checked, not only the first's: générique's lives in a folder of its own."""
    root = scratch_checkout(work / "root", ["build", "manifest"], ("conformite", "generique"))
    os.chmod(root / GENERIQUE.trees.build, 0o700)
    with pytest.raises(RenderError, match=f"{root / GENERIQUE.trees.build}: not traversable .*the build of the "
                                          "track generique"):
        render(_settings(root, work))


def test_maintenance_needs_a_rendered_prefix(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["maintenance", "on", "--prefix", str(work / "nothing")]) == 1
    assert "render the prefix first" in capsys.readouterr().err


def test_local_ca_is_kept_across_restarts_for_the_same_address(work: Path) -> None:
    """`serve --replicas` keeps its CA (a client told to trust it keeps trusting it); a new address: new CA."""
    first = make_local_tls(work / "tls", ["127.0.0.1"], reuse=True).ca.read_bytes()
    assert make_local_tls(work / "tls", ["127.0.0.1"], reuse=True).ca.read_bytes() == first
    assert make_local_tls(work / "tls", ["127.0.0.9"], reuse=True).ca.read_bytes() != first
    other = (work / "tls" / "ca.crt").read_bytes()
    assert make_local_tls(work / "tls", ["127.0.0.9"]).ca.read_bytes() != other  # no reuse asked: fresh


def test_frontal_from_the_command_line(snapshot: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`render-nginx --role frontal`: TLS required, replicas required, the manifest's 503 for no replica."""
    tls = make_local_tls(work / "tls", ["127.0.0.1"])
    secret = work / "secret"
    write_private(secret, new_secret() + "\n")
    base = ["render-nginx", "--plain-replica",
            "--role", "frontal", "--root", str(snapshot), "--prefix", str(work / "frontal"),
            "--port", "18443", "--secret-file", str(secret)]
    assert main([*base, "--replica", "127.0.0.2:18081"]) == 1
    assert "the frontal terminates TLS" in capsys.readouterr().err
    with_tls = [*base, "--tls-cert", str(tls.cert), "--tls-key", str(tls.key)]
    assert main(with_tls) == 1
    assert "at least one replica address" in capsys.readouterr().err
    assert main([*with_tls, "--replica", "127.0.0.2:notaport"]) == 1
    assert "expected host:port" in capsys.readouterr().err
    assert main([*with_tls, "--replica", "127.0.0.2:18081,127.0.0.3:18081", "--replica", "[::1]:18081"]) == 0
    site = (work / "frontal" / "conf" / "corpus.conf").read_text()
    for address in ("127.0.0.2:18081", "127.0.0.3:18081", "[::1]:18081"):
        assert f"server {address} max_fails=0;" in site
    assert "proxy_next_upstream error timeout http_503;" in site
    assert "error_page 502 =503 /_systeme/503;" in site and "error_page 504 =503 /_systeme/503;" in site
    assert "location = /_systeme/502" not in site  # its 502 means "no replica": the 503 body, never the 502
    saved = json.loads((work / "frontal" / "conf" / "settings.json").read_text())
    assert saved["role"] == "frontal"
    assert saved["upstreams"] == ["127.0.0.2:18081", "127.0.0.3:18081", "[::1]:18081"]


# --------------------------------------------------------------------- a refused config never goes live

def test_a_refused_config_leaves_the_previous_conf_intact(snapshot: Path, work: Path) -> None:
    """``nginx -t`` judges the staged files before conf/ changes: after a refusal conf/ holds the previous,
    accepted files byte for byte, and no staging folder is left behind."""
    from generator.serving.instances.nginx_write import render_and_write

    settings = _settings(snapshot, work)
    render_and_write(settings, None)
    before = {p.name: p.read_bytes() for p in settings.conf_dir.iterdir()}
    bad = work / "bad.conf"
    bad.write_text("not_a_directive on;\n")
    with pytest.raises(RenderError) as caught:
        render_and_write(replace(settings, extra_server_include=bad), None)
    assert {p.name: p.read_bytes() for p in settings.conf_dir.iterdir()} == before
    assert 'unknown directive "not_a_directive"' in str(caught.value)
    assert f"{settings.conf_dir.resolve()} left unchanged" in str(caught.value)
    assert ".staging-" not in str(caught.value)
    result = subprocess.run(nginx_command(settings.prefix, "-t"), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_the_written_config_includes_conf_not_the_staging_folder(snapshot: Path, work: Path) -> None:
    from generator.serving.instances.nginx_write import render_and_write

    settings = _settings(snapshot, work)
    render_and_write(settings, None)
    conf = settings.conf_dir.resolve()
    assert f"include {quote_path(conf / 'corpus.conf')};" in settings.nginx_conf.read_text()
    assert f"include {quote_path(conf / 'corpus-secrets.conf')};" in settings.corpus_conf.read_text()
    assert ".staging-" not in settings.nginx_conf.read_text() + settings.corpus_conf.read_text()


# ------------------------------------------------------------------------ a secret file that is not text

@pytest.mark.parametrize("case", ["not utf-8", "unreadable"])
def test_a_secret_file_that_cannot_be_read_is_one_line_without_its_bytes(
        snapshot: Path, work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    secret = new_secret()
    path = work / "secret"
    if case == "not utf-8":
        write_private(path, "")
        path.write_bytes(secret[:20].encode() + b"\xff\xfe" + secret[20:].encode() + b"\n")
        expected = f"{path}: not UTF-8 text"
    else:
        path = work / "file" / "secret"  # a path under a file: ENOTDIR, whoever runs the test
        (work / "file").write_text("x")
        expected = (f"{path}: cannot read: Not a directory; write the accepted secrets there, one per line, in a "
                    "regular file of mode 0600 (--secret-file)")
    code = main(["render-nginx", "--plain-replica",
                 "--root", str(snapshot), "--prefix", str(work / "prefix"), "--port", "18099",
                 "--secret-file", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and err == f"corpus render-nginx: {expected}\n"
    assert secret[:8] not in err and secret[-8:] not in err and "\\x" not in err
