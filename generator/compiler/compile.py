"""Compile validated sources into served documents: ``{canonical path: JSON object}``.

Field order is fixed: ``ressource``, then ``existe`` for collection documents, then the fields in the
order of the record kind's schema. Source-only fields (``id``, ``incoherence_voulue``) are dropped.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generator.base.errors import CorpusError, Location, Problem
from generator.base.text_policy import cut
from generator.compiler.source_paths import page_paths, record_path
from generator.compiler.sources import Sources
from generator.compiler.validate import Index
from generator.contract.bodies import absent_body
from generator.documents.records import Record
from generator.documents.schemas import served_fields
from generator.tracks.assertable import with_statement
from generator.tracks.model import Collection, Track, systeme_path

# What the catalogue and the request hashes may be built on: scheme, host, optional port and path prefix;
# no user, query, fragment, space, control character or trailing slash (the CLI strips one). The parts
# are then checked one by one: two spellings of one URL (:08080 and :8080) would hash differently.
_BASE_URL = re.compile(r"https?://(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]+))?"
                       r"(?P<path>(?:/[A-Za-z0-9._~-]+)*)")
_DNS_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
_BASE_URL_FORM = ("write scheme://host[:port][/prefix] (http or https, no user, query, fragment, space or "
                  "trailing slash)")


@dataclass(frozen=True)
class Document:
    """A served body before serialisation; ``kind`` is the manifest kind."""

    path: str
    kind: str  # "resource" | "absent" | "systeme"
    body: dict[str, object]
    status: int | None = None


def _plain(value: Any) -> Any:
    """Copy loader containers into plain dicts and lists (what orjson and the manifest expect)."""
    if isinstance(value, dict):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_plain(inner) for inner in value]
    return value


def _record_body(record: Record, path: str) -> dict[str, object]:
    """A record's body: its served fields, in the schema's order. Their values are the loader's containers
    as they are (dict and list subclasses, written alike by orjson, ``json.dumps`` and the hashes; nothing
    changes them after loading): copying them cost a tenth of a build."""
    body: dict[str, object] = {"ressource": path, "existe": True}
    data = record.data
    for name in served_fields(record.schema_name, record.schemas):
        if name in data:
            body[name] = data[name]
    return body


def _page_bodies(record: Record, collection: Collection, track: Track) -> Iterator[tuple[str, dict[str, object]]]:
    """The pages of a paginated record: the track's page header (``pages.entete``), then the page."""
    paths = page_paths(record, collection)
    header: dict[str, object] = {}
    for served, source in collection.header:
        if source == "proprietaire":
            owner = track.collection(collection.owner) if collection.owner else None
            header[served] = owner.path(id=record.owner or "") if owner else record.owner
        else:
            header[served] = record.data[source]
    for index, page in enumerate(record.data["pages"]):
        body: dict[str, object] = {"ressource": paths[index], "existe": True, **header}
        body["page"] = page["page"]
        body["entrees"] = page["entrees"]  # as in _record_body: the loader's list, not a copy
        body["page_suivante"] = paths[index + 1] if index + 1 < len(paths) else None
        yield paths[index], body


def check_base_url(base_url: str) -> list[Problem]:
    """The base URL is served in the catalogue and hashed by the proxy: refuse what no client would send."""
    why = _base_url_fault(base_url)
    if why is None:
        return []
    return [Problem(Location("--base-url"), "", f"{cut(base_url)} is not a base URL: {why}")]


def _base_url_fault(base_url: str) -> str | None:
    """What is wrong with a base URL, or None: one spelling per URL, as a browser would normalise it."""
    parts = _BASE_URL.fullmatch(base_url)
    if parts is None:
        return _BASE_URL_FORM
    host, port, path = parts["host"], parts["port"], parts["path"]
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return "the host in brackets is not an IPv6 address"
    elif host.replace(".", "").isdigit():
        if not _IPV4.fullmatch(host):
            return "the host is not an IPv4 address (four numbers 0 to 255, no leading zero)"
    elif len(host) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in host.split(".")):
        return ("the host is not a DNS name (labels of 1 to 63 letters, digits or hyphens, not starting or "
                "ending with a hyphen, 253 characters in all)")
    if port is not None and (port.startswith("0") or not 1 <= int(port) <= 65535):
        return f"port {cut(port)} is not 1 to 65535 written without a leading zero"
    if any(segment in (".", "..") for segment in path.split("/")):
        return "the path has a '.' or '..' segment"
    return None


def compile_documents(sources: Sources, index: Index, base_url: str, track: Track) -> list[Document]:
    """Every served document of ``track``, sorted by path. The sources must have passed validation."""
    refused = check_base_url(base_url)
    if refused:
        raise CorpusError(refused)
    docs: dict[str, Document] = {}
    for collection in track.collections:
        for record in sources.of(collection.name):
            if collection.paginated:
                for path, body in _page_bodies(record, collection, track):
                    docs[path] = Document(path, "resource", body)
            else:
                at = record_path(record, track)
                assert at is not None
                docs[at] = Document(at, "resource", _record_body(record, at))
    assert sources.referentiel is not None and sources.systeme is not None and sources.corpus is not None
    # The table of what may be asserted is generated from the criteria's champs, the one the scorer applies.
    referentiel = with_statement(track, {"ressource": track.referentiel, **_plain(sources.referentiel.data)})
    docs[track.referentiel] = Document(track.referentiel, "resource", referentiel)
    for path in index.absents:
        docs[path] = Document(path, "absent", absent_body(path))
    for status, spec in sources.systeme.data.items():
        path = systeme_path(status)
        docs[path] = Document(path, "systeme", {"ressource": path, "statut": status, **_plain(spec)},
                              int(status))
    # Every path the manifest holds but the system bodies: a declared absent too, so that the catalogue says
    # what the 404 body promises (all the track's paths) and comparing it with a fiche's references reveals
    # no absent reference, hence no P1 trap, before that reference is fetched.
    listed = sorted([*(p for p, d in docs.items() if d.kind in ("resource", "absent")), track.catalogue])
    docs[track.catalogue] = Document(track.catalogue, "resource", {
        "ressource": track.catalogue,
        "corpus": sources.corpus.data[track.corpus_key],
        "base_url": base_url,
        "appel": "GET <url> sans paramètre : method \"GET\", payload {} ; l'URL est canonique, caractère "
                 "pour caractère (ni barre finale, ni '?', ni encodage).",
        "ressources": [{"url": base_url + path, "method": "GET", "payload": {}} for path in listed],
    })
    return [docs[path] for path in sorted(docs)]
