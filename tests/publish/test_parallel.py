"""The close's pool of processes (``publish/parallel.py``): results in the order of the work whatever the number of
processes, the first failure in that order raised as it was, and a process that dies named, never waited for."""

from __future__ import annotations

import os

import pytest

from generator.base.errors import GeneratorError
from generator.publish.parallel import WorkerError, ordered_map


class Refused(GeneratorError):
    pass


class Unrebuildable(GeneratorError):
    def __init__(self, position: int, why: str) -> None:
        super().__init__(f"{position}: {why}")


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_come_in_the_order_of_the_work(jobs: int) -> None:
    assert list(ordered_map(lambda n: n * n, 50, jobs, chunk=4)) == [n * n for n in range(50)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_failure_in_order_is_raised_as_it_was(jobs: int) -> None:
    def work(n: int) -> int:
        if n in (13, 29):
            raise Refused(f"item {n} refused")
        return n

    with pytest.raises(Refused, match="item 13 refused"):
        list(ordered_map(work, 40, jobs, chunk=4))


def test_an_exception_that_cannot_cross_processes_keeps_its_message() -> None:
    def work(n: int) -> int:
        if n == 9:
            raise Unrebuildable(n, "a class whose arguments are not its message")
        return n

    with pytest.raises(WorkerError, match="9: a class whose arguments are not its message"):
        list(ordered_map(work, 20, 2, chunk=4))


def test_a_process_that_dies_is_named_and_nothing_waits_for_it() -> None:
    def work(n: int) -> int:
        if n == 10:
            os._exit(9)
        return n

    with pytest.raises(WorkerError, match="stopped without a word"):
        list(ordered_map(work, 30, 2, chunk=2))
