"""A build is one transaction: the served trees (``build/`` + ``manifest/``, or ``season/``) change together
or not at all, for a reader at any instant and after a kill at any point.

Why real directories and not a ``current`` symlink: git tracks ``build/`` and ``manifest/`` as folders of
files, nginx's ``root`` points into them and the tests compare them with a fresh build; a symlink would
commit a link instead of the bytes. POSIX cannot rename two directories in one step, so the pair is made
atomic by two locks and a journal, all under the repository root and ignored by git:

``.corpus.lock``
    The builders' lock (``flock``, exclusive, held from before the sources are read until the swap is
    done): a second build waits for the first (or refuses, with ``wait=False``). It holds the pid of
    the holder, for the message, and is removed on release. Whoever holds it may remove any leftover:
    no other build is running.
the root directory itself
    The swap lock (``flock`` on the folder): the builder holds it exclusively only while it swaps, a few
    microseconds; a reader that needs a consistent pair holds it shared (:func:`reading`, or
    ``flock -s ROOT command`` from a shell). Under it a reader sees the whole old pair or the whole new
    one, never a mixture: every step of a swap happens inside one exclusive hold.
``.corpus-txn/``
    ``stage/<tree>`` (the new trees, written whole before anything moves), ``old/<tree>`` and
    ``journal.json`` (replaced atomically: ``staging``, then ``swapping`` before the first step of the
    swap, ``committed`` after the last). Each tree is swapped in by ``renameat2(RENAME_EXCHANGE)``, so
    ``build/`` never stops existing even for nginx, which takes no lock; the previous tree lands in
    ``stage/<tree>``. Where the exchange is not available, two renames (through ``old/<tree>``).
    After a kill, the journal says what to do: before ``committed`` the previous trees are put back
    (roll back; the journal holds each new tree's device and inode, so what stands is known for sure),
    from ``committed`` on only the leftovers go. The next build, or the next reader that finds a swap
    cut short, does it and says so.

Files are written 0644 and folders 0755 whatever the umask, so that nginx workers can read them.
A crash of the machine itself is out of scope: nothing is fsynced (it would cost a sync per file).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from generator.base.atomic_file import write_atomic, write_fd, write_new
from generator.base.errors import BuildLocked, GeneratorError, TreeWriteError
from generator.base.jsonvalue import indented_json

LOCK_FILE = ".corpus.lock"
TXN_DIR = ".corpus-txn"
JOURNAL_FILE = "journal.json"
JOURNAL_FORMAT = "corpus-transaction/1"
FILE_MODE = 0o644
DIR_MODE = 0o755

STAGING, SWAPPING, COMMITTED = "staging", "swapping", "committed"

Say = Callable[[str], None]


def stderr_notice(message: str) -> None:
    print(f"corpus: {message}", file=sys.stderr)


class TransactionError(GeneratorError):
    """The transaction folder cannot be understood or repaired; the message says what to do."""


@dataclass(frozen=True)
class Journal:
    """What a transaction was doing, so that whoever finds it after a kill can finish or undo it."""

    pid: int
    trees: tuple[str, ...]
    existed: tuple[str, ...]  # trees that stood before: they are set aside, and put back on roll back
    state: str
    # (st_dev, st_ino) of each staged tree: a rename keeps them, so after a kill they tell for sure
    # whether what stands at ROOT/<tree> is the new tree or still the previous one
    new: tuple[tuple[int, int], ...] = ()

    def to_bytes(self) -> bytes:
        """The journal's JSON, indented; by :func:`indented_json` (orjson), whose writer leaves no reference
        cycle behind: a build runs with the cyclic collector paused (``json.dumps(indent=2)``'s closures
        would be garbage it never collects)."""
        return indented_json({"format": JOURNAL_FORMAT, "pid": self.pid, "trees": list(self.trees),
                              "existed": list(self.existed), "state": self.state,
                              "new": [list(identity) for identity in self.new]})

    @classmethod
    def read(cls, root: Path) -> Journal | None:
        path = root / TXN_DIR / JOURNAL_FILE
        try:
            data = json.loads(path.read_bytes())
            journal = cls(int(data["pid"]), tuple(data["trees"]), tuple(data["existed"]), data["state"],
                          tuple((int(dev), int(ino)) for dev, ino in data["new"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise TransactionError(f"{path}: unreadable journal ({exc}); check build/ and manifest/ by hand, "
                                   f"then remove {TXN_DIR}/") from None
        names_ok = all(_tree_name_ok(n) for n in journal.trees + journal.existed)
        if data.get("format") != JOURNAL_FORMAT or journal.state not in (STAGING, SWAPPING, COMMITTED) \
                or not names_ok or (journal.state != STAGING and len(journal.new) != len(journal.trees)):
            raise TransactionError(f"{path}: not a {JOURNAL_FORMAT} journal; check build/ and manifest/ by "
                                   f"hand, then remove {TXN_DIR}/")
        return journal

    def write(self, root: Path) -> None:
        """Replace the journal in one rename: a reader finds the previous state or this one, whole."""
        write_atomic(root / TXN_DIR / JOURNAL_FILE, self.to_bytes(), mode=FILE_MODE)


def _tree_name_ok(name: object) -> bool:
    """A tree is named relative to the root, ``<kind>/<piste>``: ``build/generique``."""
    return isinstance(name, str) and all(part not in ("", ".", "..") for part in name.split("/"))


# --------------------------------------------------------------------------------------- modes and writes

def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def make_dir(path: str | Path, *, fix_mode: bool | None = None) -> None:
    """``mkdir`` with mode 0755 whatever the umask (one extra ``chmod`` only when the umask would cut it;
    ``fix_mode``: whether it would, when the caller knows)."""
    os.mkdir(path, DIR_MODE)
    if fix_mode if fix_mode is not None else _umask() & DIR_MODE:
        os.chmod(path, DIR_MODE)


def write_file(path: str | Path, data: bytes, *, exclusive: bool = True, fix_mode: bool | None = None) -> None:
    """Write ``data`` to a new file of mode 0644 whatever the umask; a short write is retried, never kept."""
    write_new(path, data, FILE_MODE, exclusive=exclusive,
              fix_mode=fix_mode if fix_mode is not None else bool(_umask() & FILE_MODE))


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def write_tree(target: Path, files: dict[str, bytes]) -> None:
    """Create ``target`` and every ``{relative path: bytes}`` under it (new files only, modes fixed).

    Plain strings and os-level calls, :func:`write_file` inlined: at 100,000 files, pathlib objects, buffered
    file objects and even a function call per file cost about as much as the system calls themselves. The
    umask is read once; a folder is made the first time a file names it (``target`` is new: none exists).
    """
    mask = _umask()
    fix_file, fix_dir = bool(mask & FILE_MODE), bool(mask & DIR_MODE)
    base = os.fspath(target)
    make_dir(base, fix_mode=fix_dir)
    made = {""}
    join, open_, write, close, fchmod = os.path.join, os.open, os.write, os.close, os.fchmod
    for relative, data in files.items():
        folder = relative.rpartition("/")[0]
        if folder not in made:
            parts = folder.split("/")
            for depth in range(1, len(parts) + 1):
                sub = "/".join(parts[:depth])
                if sub not in made:
                    make_dir(join(base, sub), fix_mode=fix_dir)
                    made.add(sub)
        path = join(base, relative)
        fd = open_(path, _NEW_FILE, FILE_MODE)
        try:
            if fix_file:
                fchmod(fd, FILE_MODE)
            written = write(fd, data)
            if written != len(data):  # a short write (a signal): the rest, until all is written or it fails
                write_fd(fd, data[written:])
        except OSError as exc:  # os.write's error names no file: name it, the message needs it
            raise OSError(exc.errno, exc.strerror, path) from None
        finally:
            close(fd)


def make_parents(path: Path, top: Path) -> None:
    """Create the folders between ``top`` (which exists) and ``path`` (mode 0755): a tree named
    ``build/generique`` is staged, set aside and put in place under a ``build/`` of its own."""
    missing = []
    parent = path.parent
    while parent != top and not parent.is_dir():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        make_dir(folder)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
_libc: object = None


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``), so that ``second``
    never stops existing: nginx, which takes no lock, finds a whole ``build/`` at every instant.

    False where the kernel, the C library or the file system cannot (the caller then renames twice,
    leaving ``second`` missing for a few microseconds; readers that take the swap lock never see it).
    """
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = False
    function = getattr(_libc, "renameat2", None) if _libc else None
    if function is None:
        return False
    sys.audit("corpus.transaction.exchange", os.fspath(first), os.fspath(second))
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


def _trees_text(trees: tuple[str, ...] | list[str]) -> str:
    return " and ".join(t + "/" for t in trees)


def write_error(exc: OSError, root: Path, trees: tuple[str, ...] | list[str]) -> TreeWriteError:
    """One line naming the file and the reason; the served trees were not touched."""
    where = os.fspath(exc.filename) if exc.filename else os.fspath(root)
    return TreeWriteError(f"{where}: cannot write: {exc.strerror or exc}; {_trees_text(trees)} left unchanged")


# ------------------------------------------------------------------------------------------------- locks

@contextmanager
def _flock(fd: int, operation: int) -> Iterator[None]:
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        os.close(fd)


def _swap_lock(root: Path, operation: int) -> AbstractContextManager[None]:
    """``flock`` on the root folder itself: present in every checkout, even a read-only one."""
    return _flock(os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)), operation)


def _acquire(path: Path, wait: bool, say: Say) -> int:
    """An fd of ``path`` holding its exclusive ``flock``, the file still being the one at ``path``."""
    said = False
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except OSError as exc:
            raise TreeWriteError(f"{path}: cannot create the build lock: {exc.strerror}; nothing was "
                                 "changed") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            if not wait:
                os.close(fd)
                raise BuildLocked(f"another build (pid {holder}) holds {path}; nothing was changed (try again "
                                  "when it ends, or without --no-wait to wait for it)") from None
            if not said:
                say(f"waiting for another build (pid {holder}, holding {LOCK_FILE}) to finish")
                said = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # the previous holder removes the file as it lets go: a lock on a removed file locks nothing
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


@contextmanager
def builder_lock(root: Path, *, wait: bool = True, say: Say = stderr_notice) -> Iterator[None]:
    """Hold ``ROOT/.corpus.lock`` exclusively: one build, season build or freeze at a time.

    The file holds the holder's pid (for the waiting message) and is removed on release, so a finished
    build leaves nothing behind; whoever waited on the removed file opens the new one (see ``_acquire``).
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TreeWriteError(f"{root}: cannot create the folder: {exc.strerror}; nothing was changed") from None
    path = root / LOCK_FILE
    fd = _acquire(path, wait, say)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        with contextlib.suppress(OSError):  # a read-only tree, or removed by hand: the lock goes with the fd
            os.unlink(path)
        os.close(fd)


# -------------------------------------------------------------------------------------- undo and recovery

def _roll_back(root: Path, journal: Journal) -> None:
    """Put the previous trees back; safe to run again if killed half-way (each step is one rename).

    A tree is the new one when its (device, inode) is the staged tree's. Its predecessor is then in
    ``stage/<tree>`` (exchanged) or ``old/<tree>`` (renamed twice), or nowhere (a first build).
    """
    txn = root / TXN_DIR
    undone = txn / "undone"
    for name, new in zip(reversed(journal.trees), reversed(journal.new), strict=True):
        current, staged, aside = root / name, txn / "stage" / name, txn / "old" / name
        identity = _identity(current)
        if identity is None:  # killed between the two renames: the new tree is still staged
            if aside.exists():
                os.rename(aside, current)
            continue
        if identity != new:  # the previous tree (or nothing new) stands: nothing to undo
            continue
        if _identity(staged) is not None:  # exchanged: the previous tree waits where the new one was
            if not exchange(staged, current):
                raise TransactionError(f"{current}: cannot exchange it back with {staged}")
        elif aside.exists():
            undone.mkdir(exist_ok=True)
            make_parents(undone / name, undone)
            os.rename(current, undone / name)
            os.rename(aside, current)
        else:  # a first build: nothing stood here before
            undone.mkdir(exist_ok=True)
            make_parents(undone / name, undone)
            os.rename(current, undone / name)


def _recover_legacy(root: Path, say: Say) -> None:
    """Leftovers of the builds before transactions: ``.build-old-PID/`` (previous trees) and stages.

    That swap moved each tree aside, then moved its staged tree in, one tree after the other; a staged
    tree still present means the swap was cut short: every tree set aside goes back. Otherwise only a
    tree found missing goes back.
    """
    for old in sorted(root.glob(".build-old-*")):
        stage = root / (".build-stage-" + old.name.removeprefix(".build-old-"))
        cut_short = stage.is_dir() and any(p.is_dir() for p in stage.iterdir())
        for aside in sorted(p for p in old.iterdir() if p.is_dir()):
            current = root / aside.name
            if cut_short or not current.exists():
                _remove(current)
                os.rename(aside, current)
                say(f"restored {aside.name}/ from {old.name}/, left by a build killed during its swap")
        shutil.rmtree(old)
        say(f"removed {old.name}/, left by a killed build")
    for stage in sorted(root.glob(".build-stage-*")):
        shutil.rmtree(stage)
        say(f"removed {stage.name}/, left by a killed build")


def _finish_interrupted(root: Path, say: Say, *, leftovers: bool) -> None:
    """Under the exclusive swap lock: roll back or confirm what a killed transaction left.

    ``leftovers``: also delete the transaction folder; only a holder of the builder lock may, since
    otherwise it could be a live build's stage.
    """
    txn = root / TXN_DIR
    journal = Journal.read(root)
    if journal is not None and journal.state == SWAPPING:
        _roll_back(root, journal)
        (txn / JOURNAL_FILE).unlink()
        say(f"a build (pid {journal.pid}) was killed during its swap: restored the previous "
            f"{_trees_text(journal.trees)}")
    elif journal is not None and journal.state == COMMITTED and leftovers:
        say(f"a build (pid {journal.pid}) was killed after its swap: its "
            f"{_trees_text(journal.trees)} stand; removing its leftovers")
    elif journal is not None and leftovers:
        say(f"a build (pid {journal.pid}) was killed before its swap: nothing had changed; removing its stage")
    if leftovers:
        if txn.exists():
            if journal is None:
                say(f"removing {TXN_DIR}/, left by a killed build")
            shutil.rmtree(txn)
        _recover_legacy(root, say)


def recover(root: Path, say: Say = stderr_notice) -> None:
    """What a builder runs first, holding the builder lock: repair or remove every leftover, saying so."""
    if not root.is_dir():
        return
    with _swap_lock(root, fcntl.LOCK_EX):
        _finish_interrupted(root, say, leftovers=True)


@contextmanager
def reading(root: Path, say: Say = stderr_notice) -> Iterator[None]:
    """Hold the shared swap lock while reading several files of the served trees: they come from one build.

    A swap cut short by a kill is rolled back first (which needs write access to the root). Never start a
    build inside it: the swap's exclusive lock would wait for this very process.
    """
    if not root.is_dir():  # nothing to read; the caller's own error names what is missing
        yield
        return
    for _ in range(2):
        with _swap_lock(root, fcntl.LOCK_SH):
            journal = Journal.read(root)
            if journal is None or journal.state != SWAPPING:
                yield
                return
        with _swap_lock(root, fcntl.LOCK_EX):
            try:
                _finish_interrupted(root, say, leftovers=False)
            except OSError as exc:
                raise TransactionError(f"{root / TXN_DIR}: a build was killed during its swap and it cannot be "
                                       f"undone from here ({exc.strerror}); run 'corpus build'") from None
    raise TransactionError(f"{root / TXN_DIR}: builds keep being killed during their swap")


# ---------------------------------------------------------------------------------------------- transaction

class Transaction:
    """``with Transaction(root) as txn: ... txn.commit(trees)``: lock, recover, then stage and swap.

    Everything done inside the ``with`` (reading the sources, the freeze guard) happens under the
    builder lock, so builds run one after the other, each on the sources as they are when it starts.
    """

    def __init__(self, root: Path, *, wait: bool = True, say: Say = stderr_notice) -> None:
        self.root, self.wait, self.say = root, wait, say
        self._lock: AbstractContextManager[None] | None = None

    def __enter__(self) -> Transaction:
        self._lock = builder_lock(self.root, wait=self.wait, say=self.say)
        self._lock.__enter__()
        try:
            recover(self.root, self.say)
        except OSError as exc:
            self._lock.__exit__(None, None, None)
            raise TransactionError(f"cannot clean up after a killed build: {exc}") from None
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        assert self._lock is not None
        self._lock.__exit__(kind, exc, trace)

    def commit(self, trees: dict[str, dict[str, bytes]]) -> None:
        """Write every ``{tree: {relative file: bytes}}`` aside, then swap all of them in at once."""
        with self.staged(list(trees)) as places:
            for name, files in trees.items():
                write_tree(places[name], files)

    @contextmanager
    def staged(self, names: list[str]) -> Iterator[dict[str, Path]]:
        """Where to write each tree of ``names`` aside (folders not made yet: ``write_tree`` or the caller
        makes them), then, when the block ends, all of them swapped in at once; an exception discards them,
        and nothing is written. A writer that makes its files as it goes (a season's index, issue 43) holds
        none of them in memory."""
        root, txn = self.root, self.root / TXN_DIR
        journal = Journal(os.getpid(), tuple(names), tuple(n for n in names if (root / n).exists()), STAGING)
        try:
            make_dir(txn)
            journal.write(root)
            make_dir(txn / "stage")
            places = {}
            for name in names:
                make_parents(txn / "stage" / name, txn / "stage")
                places[name] = txn / "stage" / name
            yield places
        except OSError as exc:
            self._discard(txn)
            raise write_error(exc, root, names) from None
        except BaseException:
            self._discard(txn)
            raise
        try:
            with _swap_lock(root, fcntl.LOCK_EX):
                self._swap(journal)
        except OSError as exc:
            raise TreeWriteError(f"{write_error(exc, root, names)} (the swap failed, rolled back)") from None
        try:
            shutil.rmtree(txn)
        except OSError as exc:  # the new trees stand; a leftover is removed by the next build
            self.say(f"could not remove {TXN_DIR}/ ({exc.strerror}); the next build will")

    def _swap(self, journal: Journal) -> None:
        root, txn = self.root, self.root / TXN_DIR
        identities = []
        for name in journal.trees:
            identity = _identity(txn / "stage" / name)
            assert identity is not None
            identities.append(identity)
        swapping = replace(journal, state=SWAPPING, new=tuple(identities))
        try:
            make_dir(txn / "old")
            swapping.write(root)
            for name in journal.trees:
                staged, current = txn / "stage" / name, root / name
                if name not in journal.existed:
                    make_parents(current, root)
                    os.rename(staged, current)
                elif not exchange(staged, current):
                    make_parents(txn / "old" / name, txn / "old")
                    os.rename(current, txn / "old" / name)
                    os.rename(staged, current)
            replace(swapping, state=COMMITTED).write(root)
        except BaseException:
            if Journal.read(root) == swapping:
                _roll_back(root, swapping)
            self._discard(txn)
            raise

    def _discard(self, txn: Path) -> None:
        try:
            shutil.rmtree(txn)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.say(f"could not remove {TXN_DIR}/ ({exc.strerror}); the next build will")


def commit_trees(root: Path, trees: dict[str, dict[str, bytes]], *, wait: bool = True,
                 say: Say = stderr_notice) -> None:
    """One transaction that only writes ``trees`` (for callers with nothing to guard under the lock)."""
    with Transaction(root, wait=wait, say=say) as txn:
        txn.commit(trees)
