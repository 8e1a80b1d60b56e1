"""The close's commands under hostile input (issue 40): each case of the campaign (``tests/close_hostile.py``)
is one test, on one world made once for the module (a frozen checkout anchored in proof-spec 3.1 by
``corpus freeze-anchor``). A refusal: the exit code asked, one line naming the file, the field or the value,
no traceback, within its deadline, nothing written; a published text: no control character on any page, and
the page saying which were dropped. Beside them, the pieces the cases rest on, each with a case that must
fail so that the check can."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from close_hostile import CASES, World, make_world, run_case

from generator.observe.http_exchange import exchange, retry_after, run_again_at
from generator.publish.free_text import published_text
from generator.publish.names import name_key, skeleton, stack_key

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("close-hostile"))


@pytest.mark.parametrize("name", list(CASES))
def test_case(world: World, name: str) -> None:
    outcome = run_case(world, name)
    assert outcome.ok, outcome.line


def test_the_cases_cover_every_point_of_the_issue() -> None:
    assert sorted({point for point, _ in CASES.values()}) == [1, 2, 3, 4, 5, 6]


def test_a_case_that_should_fail_fails(world: World, tmp_path: Path) -> None:
    """The refusal check is not a rubber stamp: a command that succeeds, or says something else, is not ok."""
    assert not world.refused(["tracks", "--root", str(world.root)], 1, "anything").ok
    assert not world.refused(["score", str(tmp_path / "none"), "--root", str(world.root)], 1, "another text").ok


def test_the_skeleton_folds_what_reads_the_same_and_only_that() -> None:
    assert skeleton("\u0410") == skeleton("A") and skeleton("\u0440") == skeleton("p")  # Cyrillic А, р
    assert name_key("Agent Alpha") == name_key("\u0410gent-alpha") == name_key("\uff21GENT ALPHA")
    assert name_key("Agent Alpha") != name_key("Agent Beta") and name_key("Agent 1") != name_key("Agent 2")
    assert name_key("burn") == name_key("bum")  # "rn" reads as "m": UTS #39's own prototype
    assert stack_key("GPT-4") != stack_key("gpt-4") and stack_key("GPT") == stack_key("G\u0420\u0422")


def test_published_text_keeps_line_feeds_and_says_what_it_dropped() -> None:
    assert published_text("deux\nlignes\tici") == "deux\nlignes\tici"
    said = " [caractères de contrôle retirés à la publication : U+0000, U+202E]"
    assert published_text("a\x00b\u202ec") == "abc" + said


def test_retry_after_reads_any_delay_and_every_date_form() -> None:
    assert retry_after("00120", 0.0) == 120.0 and retry_after("1" + "0" * 30, 0.0) == 1e30
    assert retry_after("9" * 5000, 0.0) == float("inf")  # past int()'s digit limit, read all the same
    for date in ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"):
        assert retry_after(date, 784111777.0 - 60) == 60.0, date
    assert retry_after("Sun, 06 Nov 1994 08:49:37 UTC", 0.0) is None  # RFC 9110: GMT, written so
    assert run_again_at(0.0, 1e30).startswith("no date can be given")
    assert run_again_at(0.0, 3600.0) == "run it again after 1970-01-01T01:00:00Z"


def test_the_deadline_covers_a_connection_that_never_answers() -> None:
    """A port that accepts (the kernel's backlog) and never answers: the exchange ends at its deadline."""
    import socket
    import time

    with socket.create_server(("127.0.0.1", 0)) as silent:
        started = time.monotonic()
        answer = exchange(f"http://127.0.0.1:{silent.getsockname()[1]}/", seconds=0.5, limit=100)
        assert answer.error == "deadline" and answer.status == 0
        assert time.monotonic() - started < 2
