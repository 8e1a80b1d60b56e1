"""A season's close on every core (issue 43): the same work spread over ``jobs`` processes, the results in the
order of the work, so that what is published is byte for byte the same whatever the number of processes.

:func:`ordered_map` runs ``work(i)`` for each ``i`` of a range, in chunks, on processes forked from the caller:
they inherit everything the caller computed once for the season (the manifest, the key, the task graphs, the
plan of the close) without reading or copying it again. Each result comes back in the order of ``i``; a
failure comes back as the exception of the first item that failed, in that order, which is the one a single
process would have met. Nothing here reads the clock or depends on which process ran what.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import tempfile
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.synchronize import Lock
from pathlib import Path
from typing import TypeVar, cast

from generator.base.errors import GeneratorError
from generator.score.batch_tokens import SharedOutcomes
from generator.trust_layer import tsa_token

R = TypeVar("R")


def available_cores() -> int:
    """The cores this process may run on (``corpus index --jobs``' default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class WorkerError(GeneratorError):
    """A failure in a worker that could not be sent back as it was: its message, and its trace for a bug."""


@dataclass(frozen=True)
class _Failed:
    position: int
    error: BaseException


_WORK: Callable[[int], object] | None = None  # set before the fork: the workers inherit it


def _chunk(bounds: tuple[int, int]) -> list[object]:
    """Run the work of ``bounds`` in a worker; stop at the first failure and send it back."""
    assert _WORK is not None
    out: list[object] = []
    for position in range(*bounds):
        try:
            out.append(_WORK(position))
        except Exception as exc:  # sent back whole when it can cross processes, else as its message
            out.append(_Failed(position, _portable(exc)))
            break
    return out


def _portable(exc: Exception) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # an exception whose class cannot be rebuilt from its arguments
        detail = str(exc) if isinstance(exc, GeneratorError) else traceback.format_exc()
        return WorkerError(detail)
    return exc


def _start_worker(folder: Path, lock: Lock) -> None:
    """In each worker: the tokens' outcomes shared with the others (each batch's token verified once)."""
    tsa_token.use_outcomes(SharedOutcomes(folder, lock))


@dataclass
class Tally:
    """What the pools of a run verified, for the benchmarks: how many tokens (each once)."""

    tokens: int = 0


def ordered_map(work: Callable[[int], R], count: int, jobs: int, chunk: int = 8,
                tally: Tally | None = None) -> Iterator[R]:
    """``work(0)``, ..., ``work(count - 1)`` in that order, on ``jobs`` forked processes (in this one when
    ``jobs`` is 1 or the work is one chunk). The first failure, in that order, is raised."""
    if jobs <= 1 or count <= chunk or "fork" not in multiprocessing.get_all_start_methods():
        for position in range(count):
            yield work(position)
        return
    global _WORK
    context = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="corpus-tokens-") as shared:
        lock = context.Lock()
        _WORK = work
        gc.collect()
        gc.freeze()  # what the season computed stays untouched by the workers' collections (shared pages)
        pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                                   initargs=(Path(shared), lock))
        try:
            bounds = [(start, min(start + chunk, count)) for start in range(0, count, chunk)]
            for results in pool.map(_chunk, bounds):
                for result in results:
                    if isinstance(result, _Failed):
                        raise result.error
                    yield cast(R, result)
        except BrokenProcessPool:  # a worker killed (out of memory, a signal): nothing of the run is kept
            raise WorkerError(f"a process of the {jobs} scoring the season stopped without a word (killed?); "
                              "nothing written: run again, or with fewer --jobs") from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _WORK = None
            gc.unfreeze()
            if tally is not None:
                tally.tokens += sum(1 for _ in Path(shared).iterdir())
