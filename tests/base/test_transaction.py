"""A build is one transaction: killed at any step, run twice at once, or read while it swaps, the served
trees are always one whole build; leftovers are repaired by the next run, which says so.

Kills are real SIGKILLs, placed by a Python audit hook (``sys.addaudithook``) on every file-system event
the process raises (mkdir, open for writing, rename, remove, rmtree...): the hook is independent of the
code under test, so no step can be forgotten by it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from corpusfix import copy_fixture
from trackfix import copy_tracks

from generator.base import transaction
from generator.contract.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
TREES = ("build", "manifest")
MUTATIONS = ("os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.rmtree", "os.chmod",
             "corpus.transaction.exchange")  # renameat2(RENAME_EXCHANGE), raised by the code as an audit event


def synthetic_pair(tag: str) -> dict[str, dict[str, bytes]]:
    """A small build and its manifest, every byte depending on ``tag`` (so two pairs differ everywhere)."""
    build = {(f"{folder}/" if folder else "") + f"{tag}-{n}.json": f'{{"tag": "{tag}", "n": {n}}}\n'.encode()
             for folder in ("", "a", "a/b") for n in range(2)}
    listing = json.dumps({p: hashlib.sha256(d).hexdigest() for p, d in sorted(build.items())}, indent=1)
    return {"build": build, "manifest": {"manifest.json": listing.encode(),
                                         "manifest.sha256": hashlib.sha256(listing.encode()).hexdigest().encode()}}


def flat(trees: dict[str, dict[str, bytes]]) -> dict[str, bytes]:
    return {f"{name}/{rel}": data for name, files in trees.items() for rel, data in files.items()}


def snapshot(root: Path, names: tuple[str, ...] = TREES) -> dict[str, bytes]:
    files = {}
    for name in names:
        for path in sorted((root / name).rglob("*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith((".corpus-txn", ".build-")))


def quiet(_: str) -> None:
    pass


def killed_at(k: int, action: Callable[[], None]) -> bool:
    """Run ``action`` in a forked child that SIGKILLs itself at its k-th file-system mutation.

    Returns True if the child was killed, False if the action finished first (k is past its last step).
    """
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            count = [0]

            def hook(event: str, args: tuple) -> None:
                writing = event == "open" and isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR)
                if event in MUTATIONS or writing:
                    count[0] += 1
                    if count[0] == k:
                        os.kill(os.getpid(), signal.SIGKILL)

            sys.addaudithook(hook)
            action()
            os._exit(0)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the action failed without being killed"
    return False


# --- killed at every step ---------------------------------------------------------------------------------

def no_exchange(first: Path, second: Path) -> bool:
    return False  # as on a kernel or file system without renameat2(RENAME_EXCHANGE): two renames


def under(folder: str, trees: dict[str, dict[str, bytes]]) -> dict[str, dict[str, bytes]]:
    """The same trees named as a track of its own folder names them (``build/generique``)."""
    return {f"{folder}/{name}" if folder else name: files for name, files in trees.items()}


@pytest.mark.parametrize(("first_build", "exchange", "folder"),
                         [(False, True, ""), (False, False, ""), (True, True, ""), (False, False, "piste"),
                          (True, True, "piste")],
                         ids=["exchanged-with-the-previous-build", "renamed-twice", "first-build",
                              "a-track-folder-renamed-twice", "a-track-folder-first-build"])
def test_a_build_killed_at_any_step_leaves_one_whole_build(tmp_path: Path, first_build: bool,
                                                           exchange: bool, folder: str) -> None:
    old, new, third = (under(folder, synthetic_pair(tag)) for tag in ("old", "new", "third"))
    names = tuple(new)
    steps = 0

    def build_new(root: Path) -> None:
        if not exchange:
            transaction.exchange = no_exchange  # only in the forked child
        transaction.commit_trees(root, new, say=quiet)

    for k in range(1, 500):
        root = tmp_path / f"k{k}"
        root.mkdir()
        if not first_build:
            transaction.commit_trees(root, old, say=quiet)
        before = snapshot(root, names)
        if not killed_at(k, lambda root=root: build_new(root)):
            assert snapshot(root, names) == flat(new) and leftovers(root) == []
            break
        steps += 1
        left = leftovers(root)
        notes: list[str] = []
        with transaction.reading(root, say=notes.append):  # what any reader sees right after the kill
            seen = snapshot(root, names)
        assert seen in (before, flat(new)), f"killed at step {k}: a mixture of two builds is visible"
        # the next build repairs or removes whatever was left, says so, and writes its own trees
        transaction.commit_trees(root, third, say=notes.append)
        assert snapshot(root, names) == flat(third), f"killed at step {k}"
        assert leftovers(root) == [], f"killed at step {k}"
        # a stage or a journal left behind is repaired or removed with a word; nothing left, nothing said
        assert bool(notes) == bool(left), f"killed at step {k}: leftovers {left}, notes {notes}"
    assert steps > 20, "the hook did not see the steps of a transaction"


def killed_mid_swap(root: Path, trees: dict[str, dict[str, bytes]]) -> bool:
    """Kill a transaction as it is about to put manifest/ in place, build/ being new already."""
    def cut(event: str, args: tuple) -> None:
        if event in ("os.rename", "corpus.transaction.exchange") and Path(args[1]) == root / "manifest" \
                and "stage" in str(args[0]):
            os.kill(os.getpid(), signal.SIGKILL)

    def action() -> None:
        sys.addaudithook(cut)
        transaction.commit_trees(root, trees, say=quiet)

    killed = killed_at(10_000, action)
    mixed = snapshot(root) not in (flat(trees), {})
    return killed and mixed and (root / "build" / next(iter(trees["build"]))).exists()


def test_a_recovery_killed_at_any_step_can_be_run_again(tmp_path: Path) -> None:
    """Cut a swap short, then kill the repair itself at each of its steps: the next run still repairs."""
    old, new = synthetic_pair("old"), synthetic_pair("new")
    for k in range(1, 200):
        root = tmp_path / f"k{k}"
        root.mkdir()
        transaction.commit_trees(root, old, say=quiet)
        assert killed_mid_swap(root, new)
        if not killed_at(k, lambda root=root: transaction.recover(root, say=quiet)):
            assert snapshot(root) == flat(old)
            break
        with transaction.reading(root, say=quiet):
            assert snapshot(root) == flat(old), f"recovery killed at step {k}"
    else:
        pytest.fail("recovery never finished")


def test_a_killed_corpus_build_is_repaired_by_the_next_command_which_says_so(tmp_path: Path) -> None:
    """End to end: `corpus build` SIGKILLed between moving build/ in and manifest/ in."""
    copy_fixture(tmp_path)
    assert run_corpus("build", "--root", str(tmp_path), "--base-url", "http://a.invalid").returncode == 0
    before = snapshot(tmp_path)
    hook = ("import os, signal, sys\n"
            f"target = {str(tmp_path / 'manifest' / 'conformite')!r}\n"
            "def hook(event, args):\n"
            "    if event in ('os.rename', 'corpus.transaction.exchange') and str(args[1]) == target \\\n"
            "            and 'stage' in str(args[0]):\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "sys.addaudithook(hook)\n"
            "from generator.cli.main import main\n"
            f"main(['build', '--root', {str(tmp_path)!r}, '--base-url', 'http://b.invalid'])\n")
    killed = subprocess.run([sys.executable, "-c", hook], capture_output=True, text=True, cwd=ROOT, check=False)
    assert killed.returncode == -signal.SIGKILL
    mixed = Manifest.read(tmp_path / "manifest/conformite/manifest.json").check_tree(tmp_path / "build/conformite")
    assert mixed, "the kill did not land between build/ and manifest/"  # new build/ beside the old manifest/
    shown = run_corpus("show", "/catalogue", "--root", str(tmp_path))  # a reader, before any new build
    assert shown.returncode == 0, shown.stderr
    assert "killed during its swap: restored the previous build/conformite/ and manifest/conformite/" in (
        shown.stderr)
    assert "http://a.invalid" in shown.stdout and "http://b.invalid" not in shown.stdout
    assert snapshot(tmp_path) == before
    again = run_corpus("build", "--root", str(tmp_path), "--base-url", "http://b.invalid")
    assert again.returncode == 0, again.stderr
    assert "removing its stage" in again.stderr or ".corpus-txn" in again.stderr
    assert leftovers(tmp_path) == []
    manifest = Manifest.load(tmp_path, "manifest/conformite")
    assert manifest.base_url == "http://b.invalid" and manifest.check_tree(tmp_path / "build/conformite") == []


def test_leftovers_of_the_old_swap_are_restored_and_removed(tmp_path: Path) -> None:
    """The layout the previous code left when killed between its renames: new build/ beside the old
    manifest/, the old build/ stranded in .build-old-PID/, the new manifest/ still in .build-stage-PID/."""
    old, new = synthetic_pair("old"), synthetic_pair("new")
    for name, files in old.items():
        transaction.write_tree(tmp_path / name, files)
    (tmp_path / ".build-old-4242").mkdir()
    (tmp_path / "build").rename(tmp_path / ".build-old-4242" / "build")
    transaction.write_tree(tmp_path / "build", new["build"])
    (tmp_path / ".build-stage-4242").mkdir()
    transaction.write_tree(tmp_path / ".build-stage-4242" / "manifest", new["manifest"])
    (tmp_path / ".build-stage-99").mkdir()  # a build killed while staging
    notes: list[str] = []
    transaction.recover(tmp_path, say=notes.append)
    assert snapshot(tmp_path) == flat(old)
    assert leftovers(tmp_path) == []
    text = "\n".join(notes)
    assert "restored build/ from .build-old-4242/" in text and "removed .build-stage-99/" in text


# --- one build at a time, and readers see whole builds -----------------------------------------------------

def corpus(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False, timeout=120, **kwargs)  # type: ignore[call-overload]


def test_a_second_build_waits_for_the_first_or_refuses(tmp_path: Path) -> None:
    copy_fixture(tmp_path)
    lock = os.open(tmp_path / transaction.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a build in progress, as far as the others can tell
    os.write(lock, b"31337\n")
    try:
        builds = [subprocess.Popen([sys.executable, "-m", "generator.cli", "build", "--root", str(tmp_path),
                                    "--base-url", url], cwd=ROOT, stderr=subprocess.PIPE, text=True)
                  for url in ("http://one.invalid", "http://two.invalid")]
        for proc in builds:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert "waiting for another build (pid 31337" in line, line
        refused = corpus("build", "--root", str(tmp_path), "--no-wait")
        assert refused.returncode == 1
        assert "another build (pid 31337) holds" in refused.stderr and "Traceback" not in refused.stderr
        assert not (tmp_path / "build/conformite").exists()  # nobody wrote while the lock was held
    finally:
        os.close(lock)
    for proc in builds:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    manifest = Manifest.load(tmp_path, "manifest/conformite")
    assert manifest.base_url in ("http://one.invalid", "http://two.invalid")
    assert manifest.check_tree(tmp_path / "build/conformite") == []
    assert leftovers(tmp_path) == []


def test_concurrent_builds_without_help_end_with_a_consistent_pair(tmp_path: Path) -> None:
    copy_fixture(tmp_path)
    builds = [subprocess.Popen([sys.executable, "-m", "generator.cli", "build", "--root", str(tmp_path),
                                "--base-url", f"http://b{n}.invalid"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
              for n in range(3)]
    for proc in builds:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    manifest = Manifest.load(tmp_path, "manifest/conformite")
    assert manifest.check_tree(tmp_path / "build/conformite") == []
    assert f'"url": "{manifest.base_url}/entites/' in (tmp_path / "build/conformite/catalogue.json").read_text(
        "utf-8")


def test_a_reader_never_sees_two_builds_mixed(tmp_path: Path) -> None:
    pairs = [synthetic_pair("a"), synthetic_pair("b")]
    transaction.commit_trees(tmp_path, pairs[0], say=quiet)
    expected = [flat(p) for p in pairs]
    swaps = 40
    pid = os.fork()
    if pid == 0:
        try:
            for n in range(swaps):
                transaction.commit_trees(tmp_path, pairs[(n + 1) % 2], say=quiet)
            os._exit(0)
        except BaseException:
            os._exit(3)
    reads = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with transaction.reading(tmp_path, say=quiet):
            seen = snapshot(tmp_path)
        assert seen in expected, f"read #{reads}: a mixture of two builds"
        reads += 1
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            break
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the writer did not finish")
    assert reads >= 5


# --- modes ------------------------------------------------------------------------------------------------

def test_modes_do_not_depend_on_the_umask(tmp_path: Path) -> None:
    """With umask 077, files were 0600: nginx workers (another user) could not read the build."""
    repo = tmp_path / "repo"
    for name in ("corpus_src", "season_src", "tracks/conformite"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-r", str(ROOT / name), str(repo / name)], check=True)

    def strict_umask() -> None:
        os.umask(0o077)

    for command in ("build", "build-season"):
        result = corpus(command, "--root", str(repo), preexec_fn=strict_umask)
        assert result.returncode == 0, result.stderr
    modes = {}
    for name in ("build", "manifest", "season"):
        for path in [repo / name, *(repo / name).rglob("*")]:
            modes[path.relative_to(repo).as_posix()] = oct(path.stat().st_mode & 0o777)
    assert modes and len(modes) > 20
    wrong = {p: m for p, m in modes.items() if m != (oct(0o755) if (repo / p).is_dir() else oct(0o644))}
    assert not wrong, wrong


# --- write errors: one message naming the file, exit 1, the trees intact -----------------------------------

RENAMED = ("Cabinet Sans-Bénéficiaires", "Cabinet Neuf")


def built_fixture(root: Path) -> dict[str, bytes]:
    """A project with a build, and a source edit waiting to be built: what an author has before a build."""
    src = copy_fixture(root)
    assert run_corpus("build", "--root", str(root)).returncode == 0
    entity = src / "entites" / "ENT-0002.yaml"
    entity.write_text(entity.read_text("utf-8").replace(*RENAMED), "utf-8")
    return snapshot(root)


def assert_refused_cleanly(result: Ran | subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # one clear message
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_a_file_size_limit_while_staging_is_one_message(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes write(2) fail with EFBIG half-way through the stage, as a full disk would."""
    import resource

    before = built_fixture(tmp_path)

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get the error from write(), not the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    result = corpus("build", "--root", str(tmp_path), preexec_fn=limited)
    assert_refused_cleanly(result, "corpus build: ", f"{tmp_path}/.corpus-txn/stage/",
                           "cannot write: File too large", "build/conformite/ and manifest/conformite/ left "
                                                           "unchanged")
    assert snapshot(tmp_path) == before and leftovers(tmp_path) == []


def test_writing_to_a_full_device_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(OSError) as info:
        transaction.write_file("/dev/full", b"x" * 10, exclusive=False)
    assert info.value.filename == "/dev/full"
    message = str(transaction.write_error(info.value, tmp_path, ["build", "manifest"]))
    assert message == "/dev/full: cannot write: No space left on device; build/ and manifest/ left unchanged"


def private_namespace(script: str, *args: str) -> dict:
    """Run ``script`` as root of a private user and mount namespace: a real tmpfs or read-only mount,
    without privileges and invisible to the rest of the machine."""
    if subprocess.run(["unshare", "-Urm", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("unprivileged user namespaces are not available (unshare -Urm)")
    proc = subprocess.run(["unshare", "-Urm", sys.executable, "-c", script, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


NAMESPACE_HELPERS = """
import json, os, shutil, subprocess, sys
from pathlib import Path
def corpus(*args):
    r = subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True)
    return {"code": r.returncode, "err": r.stderr, "out": r.stdout}
def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes().hex() for name in ("build", "manifest")
            for p in sorted((root / name).rglob("*")) if p.is_file()}
"""


def test_a_full_disk_while_staging_is_one_message(tmp_path: Path) -> None:
    """A real tmpfs, remounted just too small for the stage of the second build: ENOSPC."""
    script = NAMESPACE_HELPERS + f"""
root = Path(sys.argv[1])
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(root)], check=True)
shutil.copytree({str(ROOT / 'tests' / 'fixtures' / 'valid' / 'corpus_src')!r}, root / "corpus_src/conformite")
shutil.copytree({str(ROOT / 'tracks' / 'conformite')!r}, root / "tracks" / "conformite")
first = corpus("build", "--root", str(root))
entity = root / "corpus_src/conformite/entites/ENT-0002.yaml"
entity.write_text(entity.read_text("utf-8").replace(*{RENAMED!r}), "utf-8")
before = snapshot(root)
stat = os.statvfs(root)
used = (stat.f_blocks - stat.f_bfree) * stat.f_frsize
built = sum(len(bytes.fromhex(v)) // 4096 + 1 for v in before.values()) * 4096
subprocess.run(["mount", "-o", f"remount,size={{used + built // 2}}", str(root)], check=True)
second = corpus("build", "--root", str(root))
left = sorted(p.name for p in root.iterdir() if p.name.startswith((".corpus-txn", ".build-")))
print(json.dumps({{"first": first, "second": second, "same": snapshot(root) == before, "left": left}}))
"""
    target = tmp_path / "disk"
    target.mkdir()
    report = private_namespace(script, str(target))
    assert report["first"]["code"] == 0, report["first"]["err"]
    second = subprocess.CompletedProcess([], report["second"]["code"], "", report["second"]["err"])
    assert_refused_cleanly(second, "cannot write: No space left on device", "build/conformite/ and "
                                                                            "manifest/conformite/ left unchanged")
    assert report["same"] and report["left"] == []


def test_a_read_only_tree_is_one_message_and_can_still_be_read(tmp_path: Path) -> None:
    before = built_fixture(tmp_path)
    shutil.copytree(ROOT / "season_src/conformite", tmp_path / "season_src/conformite")
    script = NAMESPACE_HELPERS + """
root = Path(sys.argv[1])
subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(root)], check=True)
before = snapshot(root)
results = {c[0]: corpus(*c, "--root", str(root)) for c in (["build"], ["build-season"], ["show", "/catalogue"])}
print(json.dumps({"results": results, "same": snapshot(root) == before}))
"""
    report = private_namespace(script, str(tmp_path))
    for command in ("build", "build-season"):
        got = report["results"][command]
        assert_refused_cleanly(subprocess.CompletedProcess([], got["code"], "", got["err"]),
                               f"corpus {command}: {tmp_path}/.corpus.lock: cannot create the build lock: "
                               "Read-only file system; nothing was changed")
    assert report["results"]["show"]["code"] == 0  # readers need no write access
    assert report["same"] and snapshot(tmp_path) == before


def test_nginx_serves_one_whole_build_while_builds_swap(tmp_path: Path) -> None:
    """A real nginx serving build/ while it is swapped 12 times, each step of the swap held 40 ms: every
    answer is the bytes of one of the two builds, never a 404 or the absent template of a folder caught
    missing. (The vhost's open_file_cache, 1 s, hides most of a two-rename swap's gap from nginx, but a
    lookup revalidated in the gap would cache the miss for a second: RENAME_EXCHANGE leaves no gap.)"""
    import shutil

    from nginx_server import NginxServer, private_dir
    from trackfix import CONFORMITE

    from generator.compiler.pipeline import compile_build

    builds = [compile_build(ROOT / CONFORMITE.trees.sources, url, CONFORMITE)
              for url in ("http://a.invalid", "http://b.invalid")]
    trees = [b.trees() for b in builds]
    paths = ["/catalogue", "/referentiel", *(e.path for e in builds[0].manifest.of_kind("resource")[-6:])]
    built = CONFORMITE.trees.build
    expected = {p: {t[built][b.manifest.by_path(p).file] for t, b in zip(trees, builds, strict=True)}
                for p in paths}
    assert len(expected["/catalogue"]) == 2, "the two builds must differ where the test looks"
    folder = private_dir("corpus-swap-")
    try:
        root = folder / "root"
        transaction.commit_trees(root, trees[0], say=quiet)
        copy_tracks(root)
        with NginxServer(build_root=root) as server:
            pid = os.fork()
            if pid == 0:
                try:
                    def slow_swap(event: str, args: tuple) -> None:
                        # hold every step of the swap for 40 ms, so that requests land between the steps
                        if event in ("os.rename", "corpus.transaction.exchange") and "stage" in str(args):
                            time.sleep(0.04)

                    sys.addaudithook(slow_swap)
                    for n in range(11):  # ends on the second build
                        transaction.commit_trees(root, trees[(n + 1) % 2], say=quiet)
                    os._exit(0)
                except BaseException:
                    os._exit(3)
            seen: dict[str, set[bytes]] = {p: set() for p in paths}
            answers, finished, catalogue = 0, False, b""
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                for path in paths:
                    resp = server.request(path)
                    assert resp.status == 200 and resp.body in expected[path], (path, resp.status, resp.body[:200])
                    seen[path].add(resp.body)
                    answers += 1
                    catalogue = resp.body if path == "/catalogue" else catalogue
                if not finished:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
                        finished = True
                elif b"http://b.invalid/" in catalogue:  # then until nginx serves the last build
                    break  # (its open_file_cache revalidates every second)
        assert answers >= 30 and len(seen["/catalogue"]) == 2, (answers, {p: len(s) for p, s in seen.items()})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("journal", [b"{", b'{"format": "corpus-transaction/1", "pid": 1, "trees": ["../x"], '
                                            b'"existed": [], "state": "swapping", "new": [[1, 2]]}'])
def test_a_corrupt_journal_is_one_message_and_touches_nothing(tmp_path: Path, journal: bytes) -> None:
    before = built_fixture(tmp_path)
    (tmp_path / transaction.TXN_DIR).mkdir()
    (tmp_path / transaction.TXN_DIR / transaction.JOURNAL_FILE).write_bytes(journal)
    for command in (["build"], ["show", "/catalogue"]):
        result = run_corpus(*command, "--root", str(tmp_path))
        assert_refused_cleanly(result, f"corpus {command[0]}: {tmp_path}/.corpus-txn/journal.json: ",
                               "check build/ and manifest/ by hand, then remove .corpus-txn/")
    assert snapshot(tmp_path) == before


def test_write_tree_finishes_a_short_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.write`` may write less than asked (a signal): write_tree writes the rest, never keeps a cut file."""
    real = os.write

    def short(fd: int, data: bytes) -> int:
        return real(fd, bytes(data[:3]))

    monkeypatch.setattr(os, "write", short)
    transaction.write_tree(tmp_path / "t", {"a.json": b"0123456789", "d/e/b.json": b"x" * 7, "d/c.json": b""})
    monkeypatch.undo()
    assert (tmp_path / "t/a.json").read_bytes() == b"0123456789"
    assert (tmp_path / "t/d/e/b.json").read_bytes() == b"x" * 7 and (tmp_path / "t/d/c.json").read_bytes() == b""
    assert oct((tmp_path / "t/d/e/b.json").stat().st_mode & 0o777) == "0o644"
