"""``--proofs`` as a season's close reads it (issue 43): a verification file checked once for every participant,
or a folder of proofs read as each participant is scored, each proof file read and judged once.

``corpus score`` reads a whole folder before it scores (:func:`generator.score.close_inputs.load_proofs`): one
participant's proofs. A close has hundreds of thousands; held at once, their verdicts outgrow the memory. So
:class:`FolderProofs` lists the folder (every entry checked as ``load_proofs`` checks it), and judges the
proofs a participant's submissions cite when that participant is scored, with the same reader and the same
judge (:class:`~generator.score.proofs.ProofJudge`): a verdict is the one ``corpus score`` gives. The proofs
no scored submission cites are read at the end (:meth:`FolderProofs.judge_rest`), so that a file ``corpus
score`` would refuse is refused here too; when one is, the one named is the first in name order, as
``load_proofs`` names it.
"""

from __future__ import annotations

import os
import stat
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from generator.base.bounded_read import SUBMISSION_LIMIT
from generator.base.jsonvalue import JsonValue
from generator.contract.places import Places
from generator.score.close_inputs import (
    BadFile,
    Pins,
    ScoreOptions,
    load_proofs,
    proof_judge,
    proof_names,
    read_proof_file,
    score_options,
)
from generator.score.proofs import ProofJudge
from generator.score.verdict import Proofs, Verdict


def _small_file(name: str, folder: int | None) -> bytes | None:
    """The bytes of the file ``name`` of the folder open as ``folder`` (None: ``name`` is a path) when it is a
    regular file of at most 16 MiB (``read_bounded``'s reading in four system calls, the folder's path not
    walked again for each: a season's folder holds hundreds of thousands); None otherwise, or when it cannot
    be read."""
    try:
        fd = os.open(name, _FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > SUBMISSION_LIMIT:
            return None
        data = os.read(fd, status.st_size + 1)  # a regular file reads whole up to its end; one byte more: grown
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= status.st_size else None


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_folder(folder: Path, owner: object) -> int | None:
    """A descriptor of ``folder`` that its files are opened from, closed when ``owner`` is collected; None
    where the system opens no file from a folder's descriptor, or the folder cannot be opened so."""
    if os.open not in os.supports_dir_fd:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    weakref.finalize(owner, os.close, fd)
    return fd


def _listed(folder: Path) -> frozenset[str]:
    """:func:`proof_names` of ``folder``, as a set: every entry checked alike (a regular ``*.json`` file, a link
    never followed), but not sorted (a season's folder holds hundreds of thousands). A folder with another
    entry, or with none, is refused by :func:`proof_names` itself, in its words."""
    entries, names = 0, []
    with os.scandir(folder) as found:
        for entry in found:
            entries += 1
            name = entry.name
            if name.endswith(".json") and len(name) > 5 and entry.is_file(follow_symlinks=False):
                names.append(name)  # _suffix(name) == ".json": the last dot before "json", not the first
    if not names or len(names) != entries:
        return frozenset(proof_names(folder))
    return frozenset(names)


def cited_ids(submissions: Iterable[JsonValue]) -> list[str]:
    """Every proof id an assertion of ``submissions`` names: the only ones the scorer looks up."""
    found: set[str] = set()
    for sub in submissions:
        assertions = sub.get("assertions") if isinstance(sub, dict) else None
        for a in assertions if isinstance(assertions, list) else []:
            ids = a.get("proof_ids") if isinstance(a, dict) else None
            found.update(p for p in (ids if isinstance(ids, list) else []) if isinstance(p, str))
    return sorted(found)


class FolderProofs:
    """A folder of proofs as Trust Layer serves them, judged by ``judge`` proof by proof, on demand."""

    def __init__(self, folder: Path, judge: ProofJudge) -> None:
        self.folder, self.judge = folder, judge
        self.names = _listed(folder)  # every entry checked, none read yet
        self._fd = _open_folder(folder, self)  # the folder listed is the folder read
        self._prefix = "" if self._fd is not None else os.path.join(folder, "")

    def verdicts(self, proof_ids: Iterable[str]) -> Proofs:
        """The verdicts of the proofs among ``proof_ids`` that the folder holds (the others are absent, as in
        ``corpus score``: not in the verification, no valid proof known). Each file is read once: an honest
        3.1 proof is judged from its bytes in one pass (:meth:`ProofJudge.honest`), any other read and judged
        as ``corpus score`` does."""
        found = {}
        names = self.names
        for proof_id in proof_ids:
            name = proof_id + ".json"
            if name in names:
                found[proof_id] = self._verdict(name, proof_id)
        return found  # the judge's verdicts: of the shape check_proofs wants, by construction

    def _verdict(self, name: str, proof_id: str) -> Verdict:
        data = _small_file(self._prefix + name, self._fd)
        if data is None:  # not a regular file of at most 16 MiB as it was listed: the reader says why
            return self.judge.verdict(read_proof_file(self.folder / name))
        return self.judge.honest(data, proof_id) or self.judge.verdict(read_proof_file(self.folder / name, data))

    def judge_rest(self, names: Sequence[str]) -> None:
        """Read and judge the proofs ``names`` (cited by no scored submission): a file that cannot be used is
        refused, as ``corpus score`` refuses it; the verdicts are not kept."""
        for name in names:
            self._verdict(name, name[:-5])

    @contextmanager
    def refusals_in_name_order(self) -> Iterator[None]:
        """Inside it, a proof file refused (:class:`BadFile`) is named as ``load_proofs`` names it: the first that
        cannot be used in name order, whichever process met one first."""
        try:
            yield
        except BadFile:
            for name in sorted(self.names):
                try:
                    read_proof_file(self.folder / name)
                except BadFile as first:
                    raise first from None
            raise


def close_proofs(root: Path, places: Places, pins: Pins, proofs: Path | None, salt_file: Path | None,
                 anchor_file: Path | None) -> tuple[ScoreOptions, FolderProofs | None]:
    """``corpus index``'s proof and freeze options: ``corpus score``'s (:func:`score_options`), but a folder of
    proofs listed and its pins checked now, its proofs judged as the participants are scored."""
    if proofs is not None and proofs.is_dir():
        folder = FolderProofs(proofs, proof_judge(proofs, pins, root, places))
        folder.judge.window  # noqa: B018  # an unusable pin is one line before any proof is judged
        return score_options(root, places, pins, None, salt_file, anchor_file), folder
    loaded = load_proofs(proofs) if proofs is not None else None
    return score_options(root, places, pins, loaded, salt_file, anchor_file), None
