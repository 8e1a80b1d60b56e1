"""What the two publications of a season share (the opening kit and the close folder): the SHA-256 list of
every file, its reader, the French page saying what each file is, and the files copied from a checkout's trees.

``SHA256SUMS`` is ``sha256sum``'s format (``<hex>  <path>``, one a line, sorted by path), so that a reader
without this package checks it with ``sha256sum -c SHA256SUMS``; it lists every file of the folder but itself.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import GeneratorError, shown_path, unreadable_text
from generator.base.output_places import OutputRefused
from generator.contract.hashing import sha256_hex
from generator.publish.wording import AI_ACT
from generator.trust_layer.freeze_chain import ChainEntryJson

SUMS = "SHA256SUMS"
README = "LISEZMOI.html"
REPLACED = "gel/remplaces"  # gel/remplaces/<n>/record.json and anchor.json: the replaced records, kept


def published_link(entry: ChainEntryJson, folder: str = "gel") -> tuple[str, str | None]:
    """Where a record of the chain and its anchor are in a publication: ``gel/`` for the record in force,
    ``gel/remplaces/<n>/`` for a replaced one (as in the freeze folder)."""
    base = folder if entry["en_vigueur"] else f"{folder}/remplaces/{entry['numero']}"
    return f"{base}/record.json", f"{base}/anchor.json" if entry["ancre"] else None


def chain_paragraph(chain: list[ChainEntryJson]) -> str | None:
    """The chain said in French (None: one freeze, nothing replaced): every proof_id with its motive."""
    if len(chain) < 2:
        return None
    said = [f"{e['numero']}. {e['proof_id'] or 'non ancré'}"
            + (f" (remplace {e['remplace']}, motif : {e['motif']})" if e["remplace"] else " (premier gel)")
            + (" : en vigueur" if e["en_vigueur"] else " : remplacé avant l'ouverture") for e in chain]
    return (f"Ce gel a été remplacé avant l'ouverture de la saison (spec §8) : la chaîne compte {len(chain)} "
            "relevés, chacun ancré, chacun nommant le SHA-256 et le proof_id du relevé qu'il remplace, avec le "
            "motif ; tous les proof_id sont publiés ensemble, et tous les sels à la clôture. " + " ; ".join(said)
            + ".")


_LINE = re.compile(r"([0-9a-f]{64})  (\S(?:.*\S)?)")


class PublicationError(GeneratorError):
    """A publication cannot be written or read: one line naming the file, exit 1."""


def sums_bytes(files: Mapping[str, bytes]) -> bytes:
    """``SHA256SUMS`` of ``files`` (every one but itself), sorted by path."""
    return sums_text({name: sha256_hex(data) for name, data in files.items()})


def sums_text(digests: Mapping[str, str]) -> bytes:
    """``SHA256SUMS`` of files known by their SHA-256 (every one but itself), sorted by path."""
    lines = (f"{digests[name]}  {name}\n" for name in sorted(digests) if name != SUMS)
    return "".join(lines).encode("utf-8")


def read_sums(data: bytes, source: str) -> dict[str, str]:
    """``SHA256SUMS`` read back: path -> SHA-256; a line of another shape, a path twice or one leaving the
    folder is one line naming it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PublicationError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        found = _LINE.fullmatch(line)
        name = found.group(2) if found else ""
        if found is None or name.startswith("/") or ".." in Path(name).parts or name in out:
            raise PublicationError(f"{source}:{number}: expected '<sha256>  <path inside the folder>', each path "
                                   f"once, got {shown_path(line[:120])}")
        out[name] = found.group(1)
    return out


def folder_files(folder: Path) -> dict[str, Path]:
    """Every entry below ``folder`` by its relative path (POSIX), links and other kinds included, so that
    none is overlooked. The names are made as strings (a close publication holds 50,000 files: a path made and
    cut again for each cost seconds)."""
    out: dict[str, Path] = {}
    base = os.fspath(folder)
    for top, dirs, names in os.walk(base):
        dirs.sort()
        prefix = "" if top == base else top[len(base) + 1:].replace(os.sep, "/") + "/"
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]:
            out[prefix + name] = Path(top, name)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
    return out


def read_published(path: Path) -> bytes:
    """A file of a publication or a checkout's tree, read bounded, never through a link."""
    try:
        return read_bounded(path, PUBLISHED_LIMIT, follow_symlinks=False)
    except OSError as exc:
        raise PublicationError(unreadable_text(path, exc)) from None


def tree_files(root: Path, tree: str, prefix: str) -> dict[str, bytes]:
    """Every file below ``root/tree`` under ``prefix/`` (a checkout's track definition, its build)."""
    return {f"{prefix}/{name}": read_published(path) for name, path in sorted(folder_files(root / tree).items())}


def page(title: str, paragraphs: Sequence[str], rows: Sequence[tuple[str, str]]) -> bytes:
    """A static French page: a title, paragraphs, then each file with what it is. No script, nothing loaded."""
    escape = html.escape
    body = "\n".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    table = "\n".join(f"<tr><td><code>{escape(name)}</code></td><td>{escape(what)}</td></tr>"
                      for name, what in rows)
    return ("<!DOCTYPE html>\n<html lang=\"fr\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(title)}</title>\n"
            "<style>body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 72em; "
            "padding: 0 1em; line-height: 1.4; } table { border-collapse: collapse; } th, td { border: 1px solid "
            "#bdbdbd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; } code { font-family: "
            "monospace; overflow-wrap: anywhere; }</style>\n</head>\n<body>\n"
            f"<p class=\"etiquette-ai-act\">{escape(AI_ACT)}</p>\n<h1>{escape(title)}</h1>\n{body}\n"
            "<table>\n<thead><tr><th scope=\"col\">fichier</th><th scope=\"col\">ce qu'il est</th></tr></thead>\n"
            f"<tbody>\n{table}\n</tbody>\n</table>\n</body>\n</html>\n").encode()


def replaceable(target: Path, marker: str, option: str = "--out") -> None:
    """``target`` (``<out>/<piste>``) may be written whole: absent, empty, or an earlier publication of the
    same kind (it holds ``marker`` and ``SHA256SUMS``); anything else is refused, never replaced."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise OutputRefused(f"{option}: {target} exists and is not a folder")
    earlier = (target / marker).is_file() and (target / SUMS).is_file()
    if target.is_dir() and any(target.iterdir()) and not earlier:
        raise OutputRefused(f"{option}: {target} is not empty and holds no earlier publication ({marker} and "
                            f"{SUMS}): give another folder")
