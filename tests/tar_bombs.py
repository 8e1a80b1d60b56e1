"""Hostile release artifacts built at run time with the tarfile module: a real artifact's members with one
member whose header declares 2 GiB (a plain file, a GNU sparse file, a PAX sparse file 0.1 or 1.0) in a few
bytes, and the re-packing helpers the artifact tests and bench/bench_release.py share. Each bomb keeps the
SHA-256 file in step (only the members can tell)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GIB2 = 2 * 1024 ** 3
INDEX = "release.json"
Members = list[tuple[tarfile.TarInfo, bytes | None]]


def members_of(artifact: Path) -> Members:
    with tarfile.open(artifact) as tar:
        return [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]


def tar_of(members: Members, tail: bytes = b"") -> bytes:
    """A PAX tar of ``members``; ``tail`` (raw header and data blocks) goes before the end-of-archive."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
        if tail:  # written as is, after the members
            tar.fileobj.write(tail)  # type: ignore[union-attr]
            tar.offset += len(tail)
    return buffer.getvalue()


def reindexed(members: Members) -> Members:
    """``members`` with the artifact's index rewritten to declare them as they now are: a thorough forger."""
    rows = [{"path": m.name, "length": len(d), "sha256": hashlib.sha256(d).hexdigest()}
            for m, d in members if d is not None and m.name != INDEX]
    out = []
    for member, data in members:
        if member.name == INDEX and data is not None:
            index = json.loads(data)
            index["files"] = rows
            data = json.dumps(index).encode()
            member.size = len(data)
        out.append((member, data))
    return out


def rewrite(artifact: Path, data: bytes) -> None:
    """Write ``data`` as the artifact and record its SHA-256 beside it, as pack does."""
    artifact.write_bytes(data)
    artifact.with_suffix(".sha256").write_text(f"{hashlib.sha256(data).hexdigest()}  {artifact.name}\n")


def repack(artifact: Path, change: Callable[[Members], Members], reindex: bool = False, tail: bytes = b"") -> None:
    members = change(members_of(artifact))
    rewrite(artifact, tar_of(reindexed(members) if reindex else members, tail))


def _checksum(block: bytearray) -> bytearray:
    """The header's checksum again (the sum of its bytes, the checksum field counted as spaces)."""
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return block


def plain_header(name: str, size: int = GIB2) -> bytes:
    """A regular file's header declaring ``size`` bytes, followed by 512 bytes only."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(tarfile.USTAR_FORMAT) + b"x" * 512


def gnu_sparse_header(name: str, size: int = GIB2) -> bytes:
    """An old GNU sparse member ('S'): 512 bytes of data stored at offset ``size - 512`` of a file of
    ``size`` bytes (its real size in the header's sparse fields)."""
    info = tarfile.TarInfo(name)
    info.type, info.size = tarfile.GNUTYPE_SPARSE, 512
    block = bytearray(info.tobuf(tarfile.GNU_FORMAT)[-512:])
    block[386:398] = b"%011o\0" % (size - 512)  # first sparse entry: offset
    block[398:410] = b"%011o\0" % 512  # and its byte count
    block[482] = 0  # no extended sparse header
    block[483:495] = b"%011o\0" % size  # the real size
    return bytes(_checksum(block)) + b"x" * 512


def pax_sparse(name: str, version: str, size: int = GIB2) -> tuple[tarfile.TarInfo, bytes]:
    """A PAX sparse member (GNU.sparse.* keywords, ``version`` "0.1" or "1.0") of ``size`` bytes, 512 of
    them stored."""
    if version == "1.0":
        info = tarfile.TarInfo(f"GNUSparseFile.0/{name.rsplit('/', 1)[-1]}")
        info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": name,
                            "GNU.sparse.realsize": str(size)}
        data = f"1\n{size - 512}\n512\n".encode().ljust(512, b"\0") + b"x" * 512
    else:
        info = tarfile.TarInfo(name)
        info.pax_headers = {"GNU.sparse.size": str(size), "GNU.sparse.map": f"{size - 512},512"}
        data = b"x" * 512
    info.size = len(data)
    return info, data


def bombs() -> dict[str, Callable[[Path, str], None]]:
    """Each bomb, made from a packed artifact by replacing its member ``name`` (a build file)."""
    def without(name: str) -> Callable[[Members], Members]:
        return lambda ms: [(m, d) for m, d in ms if m.name != name]

    def with_pax(version: str) -> Callable[[Path, str], None]:
        return lambda a, n: repack(a, lambda ms: [*without(n)(ms), pax_sparse(n, version)])

    return {
        "a 2 GiB member in a few bytes": lambda a, n: repack(a, without(n), tail=plain_header(n)),
        "a GNU sparse member of 2 GiB": lambda a, n: repack(a, without(n), tail=gnu_sparse_header(n)),
        "a PAX 0.1 sparse member of 2 GiB": with_pax("0.1"),
        "a PAX 1.0 sparse member of 2 GiB": with_pax("1.0"),
    }


_CHILD = """
import json, os, sys
releases = os.path.realpath(sys.argv[2])
written = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and isinstance(args[2], int) \\
            and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) or event in ("os.mkdir", "os.rename"):
        path = os.path.realpath(str(args[0]))
        if path.startswith(releases + os.sep):
            written.append(event + " " + path)
sys.addaudithook(hook)
from generator.cli.main import main
code = main(["release", "install", sys.argv[1], "--releases", releases])
# VmHWM, the peak of this process's own memory: ru_maxrss would carry the parent's peak across execve
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"written": written, "max_rss_kib": peak}))
sys.exit(code)
"""


@dataclass(frozen=True)
class Run:
    """``corpus release install`` run in a child process: its exit code, stderr, what it wrote (or created)
    inside the releases folder, its peak resident memory and its wall time."""

    code: int
    err: str
    written: list[str]
    max_rss_mib: float
    seconds: float


def run_install(artifact: Path, releases: Path, root: Path) -> Run:
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(artifact), str(releases)], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    seconds = time.monotonic() - start
    report = json.loads(out)  # the child's own peak (its VmHWM, KiB), as it ends
    return Run(proc.returncode, err.decode(), report["written"], report["max_rss_kib"] / 1024, seconds)


def extended_header(size: int = 100 * 1024 * 1024) -> bytes:
    """A PAX extended header ('x') declaring ``size`` bytes of keywords, followed by 1 KiB only."""
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, size
    return info.tobuf(tarfile.USTAR_FORMAT) + b"x" * 1024
