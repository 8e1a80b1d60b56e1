"""``corpus build`` says which served bodies changed against the build it replaced: the count, and the paths
up to a limit. The comparison is by path and SHA-256 of the manifests, before and after."""

from __future__ import annotations

from generator.compiler.pipeline import SHOWN_PATHS, Changes
from generator.contract.manifest import Entry, Manifest


def manifest(bodies: dict[str, str]) -> Manifest:
    return Manifest.create("essai", "https://corpus.example", (
        Entry(path, "resource", path.lstrip("/") + ".json", 10, digest, "0" * 64, request_hash="1" * 64)
        for path, digest in bodies.items()))


def test_one_changed_body_is_named() -> None:
    before = manifest({"/a": "a" * 64, "/b": "b" * 64})
    after = manifest({"/a": "a" * 64, "/b": "c" * 64})
    changes = Changes.between(before, after)
    assert changes == Changes(changed=("/b",))
    assert changes.text() == "1 served body differs from the previous build (1 changed): /b"


def test_added_and_removed_bodies_are_counted_apart() -> None:
    before, after = manifest({"/a": "a" * 64, "/b": "b" * 64}), manifest({"/a": "d" * 64, "/c": "c" * 64})
    changes = Changes.between(before, after)
    assert changes.text() == "3 served bodies differ from the previous build (1 changed, 1 added, 1 removed): " \
                             "/a, /c, /b"


def test_paths_are_shown_up_to_the_limit() -> None:
    before = manifest({f"/p{n:02d}": "a" * 64 for n in range(SHOWN_PATHS + 3)})
    after = manifest({f"/p{n:02d}": "b" * 64 for n in range(SHOWN_PATHS + 3)})
    text = Changes.between(before, after).text()
    shown = ", ".join(f"/p{n:02d}" for n in range(SHOWN_PATHS))
    count = SHOWN_PATHS + 3
    assert text == f"{count} served bodies differ from the previous build ({count} changed): {shown} and 3 more"


def test_the_same_bodies_and_a_first_build_say_so() -> None:
    same = manifest({"/a": "a" * 64})
    assert Changes.between(same, manifest({"/a": "a" * 64})).text() == \
        "no served body changed since the previous build"
    assert Changes.between(None, same).text() == "no previous build to compare with"
