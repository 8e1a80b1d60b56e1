"""Read ``tracks/<piste>/track.yaml`` into a :class:`~generator.tracks.model.Track`.

The file is loaded by the same strict YAML loader as the sources and checked against
``generator/schemas/track.schema.json``; then every name it uses is checked against what it declares
(a link to an undeclared collection, a placeholder without a pattern...). Every problem is collected and
reported as ``file:line:column: field: message``, all at once, as for the sources.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from generator.base.errors import CorpusError, Location, Problem
from generator.base.text_policy import cut
from generator.documents.records import Record, read_record
from generator.documents.schema_checks import check_schema
from generator.documents.schemas import checked_schema
from generator.documents.yamlstrict import location_of
from generator.tracks.model import (
    Bareme,
    Collection,
    CommonList,
    DateOrder,
    Drawing,
    GraphSpec,
    Link,
    Source,
    Summary,
    Track,
    Trees,
    VerdictReference,
    Vocabulary,
)

TRACKS_DIR = "tracks"
TRACK_FILE = "track.yaml"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def track_files(root: Path) -> list[Path]:
    """The ``track.yaml`` of each folder of ``root/tracks/``, sorted by folder name."""
    folder = root / TRACKS_DIR
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CorpusError([Problem(Location(f"{TRACKS_DIR}/"), "", f"cannot read: {exc.strerror}")]) from None
    return [folder / name / TRACK_FILE for name in names]


def load_tracks(root: Path) -> list[Track]:
    """Every track of the checkout, the primary one first, then the others in folder order; one
    :class:`CorpusError` lists every problem."""
    files = track_files(root)
    if not files:
        raise CorpusError([Problem(Location(f"{TRACKS_DIR}/"), "", "no track: the checkout needs "
                                   f"{TRACKS_DIR}/<piste>/{TRACK_FILE} (docs/tracks.md)")])
    problems: list[Problem] = []
    tracks = []
    for file in files:
        try:
            tracks.append(load_track(file))
        except CorpusError as exc:
            problems += exc.problems
    _check_together(tracks, problems, every_loaded=len(tracks) == len(files))
    if problems:
        raise CorpusError(problems)
    return sorted(tracks, key=lambda track: not track.primary)


def track_named(root: Path, piste: str | None) -> Track:
    """The track called ``piste`` (None: the primary track, conformité on this checkout)."""
    return pick_track(load_tracks(root), piste)


def pick_track(tracks: list[Track], piste: str | None) -> Track:
    """The track called ``piste`` among tracks already loaded (None: the primary one, first of
    :func:`load_tracks`); a usage of ``--track`` naming no track is a :class:`CorpusError` listing them."""
    if piste is None:
        return tracks[0]
    for track in tracks:
        if track.piste == piste:
            return track
    names = ", ".join(t.piste for t in tracks)
    raise CorpusError([Problem(Location("--track"), "", f"no track {cut(piste)} in {TRACKS_DIR}/ "
                                                        f"(tracks: {names})")])


def load_track(file: Path) -> Track:
    """One track file; raise :class:`CorpusError` with every problem of it."""
    problems: list[Problem] = []
    folder = file.parent
    # read from tracks/, so that every message names tracks/<piste>/track.yaml whatever the checkout's name
    record = read_record(folder.parent, f"{folder.name}/{file.name}", "track", problems)
    if record is None:
        raise CorpusError(problems)
    problems += check_schema(record)
    if problems:
        raise CorpusError(problems)
    checker = _Checker(record, problems)
    track = checker.track(folder)
    for key, path in (("referentiel", track.referentiel), ("catalogue", track.catalogue),
                      ("gel_servi", track.record_path)):
        shaped = next((c.name for c in track.collections if c.matches(path)), None)
        if shaped is not None:
            problems.append(checker.at(record.data, key, key, f"{path} has the shape of the collection "
                                       f"{shaped}: a single document needs a path of its own"))
    if len({track.referentiel, track.catalogue, track.record_path}) < 3:
        problems.append(checker.at(record.data, "gel_servi", "gel_servi", "referentiel, catalogue and "
                                   "gel_servi must be three different paths"))
    if folder.name != track.piste:
        problems.append(checker.at(record.data, "piste", "piste", f"the folder must be named {track.piste} "
                                   f"after the track (it is {folder.name})"))
    if problems:
        raise CorpusError(problems)
    return track


def _check_together(tracks: list[Track], problems: list[Problem], *, every_loaded: bool) -> None:
    """Tracks served by one nginx share its path space: no two may claim the same path; one of them, and
    only one, is the primary track (counted when every definition loaded: a broken one may be it)."""
    seen: dict[str, str] = {}
    for track in tracks:
        for path in (*track.served_paths(), *(c.prefix for c in track.collections)):
            other = seen.setdefault(path, track.piste)
            if other != track.piste:
                problems.append(Problem(Location(f"{TRACKS_DIR}/{track.piste}/{TRACK_FILE}"), "", f"{path} is "
                                        f"already served by the track {other}: paths of two tracks must differ"))
    primary = [track.piste for track in tracks if track.primary]
    if every_loaded and len(primary) != 1:
        said = f"{len(primary)} do ({', '.join(primary)})" if primary else "none does"
        problems.append(Problem(Location(f"{TRACKS_DIR}/"), "principale", f"exactly one track must be the "
                                f"primary one (principale: true in its {TRACK_FILE}), and {said}: it is served at "
                                "the root with the /_systeme bodies and taken without --track (docs/tracks.md)"))


class _Checker:
    """Turns the checked mapping into model objects, naming each undeclared name where it is written."""

    def __init__(self, record: Record, problems: list[Problem]) -> None:
        self.record, self.problems = record, problems
        self.folder: Path | None = None
        self.schema_of: dict[str, str] = {}  # collection name -> schema name

    def has_field(self, schema_name: str, dotted: str) -> bool:
        """Whether the schema declares the field path (points go down nested ``properties``). A schema that
        cannot be read, or a level written otherwise than with ``properties`` (a ``$ref``, a combination),
        is accepted: another check names an unreadable schema, and nothing simple says what the other holds."""
        if self.folder is None:
            return True
        try:
            node: object = checked_schema(schema_name, self.folder / "schemas")
        except (OSError, ValueError):
            return True
        for part in dotted.split("."):
            if not isinstance(node, dict):
                return True
            properties = node.get("properties")
            if not isinstance(properties, dict):
                return "$ref" in node or node.get("type") in (None, "object")  # a scalar holds no field
            if part not in properties:
                return False
            node = properties[part]
        return True

    def check_field(self, collections: tuple[str, ...], container: object, key: str | int, fieldname: str,
                    name: str) -> None:
        """``name`` is a field of each collection's records, else one line at its place naming those lacking it."""
        lacking = [c for c in dict.fromkeys(collections)
                   if c in self.schema_of and not self.has_field(self.schema_of[c], name)]
        if lacking:
            where = " nor ".join(f"{c} (schemas/{self.schema_of[c]}.schema.json)" for c in lacking)
            self.fail(container, key, fieldname, f"{name!r} is not a field of the collection {where}")

    def at(self, container: object, key: str | int | None, fieldname: str, message: str) -> Problem:
        return Problem(location_of(container, key, self.record.file), fieldname, message)

    def fail(self, container: object, key: str | int | None, fieldname: str, message: str) -> None:
        self.problems.append(self.at(container, key, fieldname, message))

    def track(self, folder: Path) -> Track:
        data = self.record.data
        self.folder = folder
        self.schema_of = {c["nom"]: c["schema"] for c in data["collections"]}
        collections = tuple(self.collection(i, c) for i, c in enumerate(data["collections"]))
        names = {c.name for c in collections}
        for i, item in enumerate(data["collections"]):
            owner = item.get("proprietaire")
            if owner is not None and owner not in names:
                self.fail(item, "proprietaire", f"collections[{i}].proprietaire", f"{owner!r} is not a "
                          "collection of this track")
        links = tuple(self.link(i, k, collection["nom"], item, names)
                      for i, collection in enumerate(data["collections"])
                      for k, item in enumerate(collection.get("liens", [])))
        code = data["code"]
        if code.endswith(".py") and not (folder / code).is_file():
            self.fail(data, "code", "code", f"{code} is not a file of {folder.name}/")
        bareme = data["bareme"]
        return Track(
            piste=data["piste"], title=data["titre"], folder=folder, code=code,
            trees=Trees.of(data["piste"]),
            referentiel=data["referentiel"], catalogue=data["catalogue"], record_path=data["gel_servi"],
            corpus_key=data["cle_du_corpus"],
            collections=collections, links=links,
            date_orders=tuple(self.date_order(i, item, names) for i, item in
                              enumerate(data.get("ordres_de_dates", []))),
            vocabularies=tuple(self.vocabulary(i, item, names) for i, item in
                               enumerate(data.get("vocabulaires", []))),
            graph=self.graph(data["graphe"], names, links),
            statement_fields=tuple(data["enonce"]["champs"]), task_id=self.regex(data["enonce"], "id",
                                                                                   "enonce.id"),
            bareme=Bareme(
                section=bareme["section"], file=f"{TRACKS_DIR}/{data['piste']}/{bareme['section']}.txt",
                sha256=bareme["sha256"],
                bounds={task: (int(pair[0]), int(pair[1])) for task, pair in bareme["bornes"].items()},
                verdicts={verdict: int(n) for verdict, n in bareme["repartition"].items()},
                families=tuple(bareme["familles"]),
                family_minimum={family: int(n) for family, n in bareme["familles_minimum"].items()},
                controls=int(bareme["controles"]),
                calls=(int(bareme["appels"][0]), int(bareme["appels"][1])),
                calls_ceiling=int(bareme["appels_plafond"]),
                best_constant=(int(bareme["meilleure_constante"][0]), int(bareme["meilleure_constante"][1]))),
            verdicts=tuple(data["verdicts"]),
            drawing=self.drawing(data.get("dessin"), names),
            verdict_reference=self.verdict_reference(data.get("verdict_reference")),
            trust_layer_key=data.get("trust_layer_key"), primary=data.get("principale", False),
        )

    def verdict_reference(self, item: dict[str, Any] | None) -> VerdictReference | None:
        if item is None:
            return None
        return VerdictReference(item["nom"], self.regex(item, "motif", "verdict_reference.motif"),
                                item.get("distinctes", False))

    def drawing(self, item: dict[str, Any] | None, names: set[str]) -> Drawing:
        if item is None:
            return Drawing()
        summaries = {}
        for name, summary in item.get("resumes", {}).items():
            if name not in names:
                self.fail(item["resumes"], name, f"dessin.resumes.{name}", f"{name!r} is not a collection of "
                          "this track")
            summaries[name] = Summary(tuple(tuple(line) for line in summary.get("lignes", [])),
                                      summary.get("entrees", ""))
        for name in item.get("groupes", {}):
            if name not in names:
                self.fail(item["groupes"], name, f"dessin.groupes.{name}", f"{name!r} is not a collection of "
                          "this track")
        return Drawing(item["tache"], item["propres"], summaries, item.get("section", ""),
                       dict(item.get("groupes", {})))

    def regex(self, container: dict[str, Any], key: str, fieldname: str) -> str:
        pattern: str = container[key]  # the schema made it a string
        try:
            re.compile(pattern)
        except re.error as exc:
            self.fail(container, key, fieldname, f"not a regular expression: {exc}")
        return pattern

    def collection(self, index: int, item: dict[str, Any]) -> Collection:
        where = f"collections[{index}]"
        template = item["chemin"]
        placeholders = _PLACEHOLDER.findall(template)
        motifs = item["motifs"]
        for name in placeholders:
            if name not in motifs:
                self.fail(item, "chemin", f"{where}.chemin", f"{{{name}}} has no pattern under motifs")
        for name in motifs:
            if name not in placeholders:
                self.fail(motifs, name, f"{where}.motifs.{name}", f"{{{name}}} does not appear in {template}")
            else:
                self.regex(motifs, name, f"{where}.motifs.{name}")
        source = item["source"]
        pages = item.get("pages")
        paginated = pages is not None
        if paginated != ("page" in placeholders):
            self.fail(item, "chemin", f"{where}.chemin", "a collection with pages has a {page} in its path, "
                      "and only such a collection")
        return Collection(
            name=item["nom"], template=template,
            parts=tuple((name, motifs.get(name, "")) for name in placeholders), schema=item["schema"],
            source=Source(folder=source.get("dossier"), section=source.get("section"),
                          many=source.get("plusieurs", False), file=source.get("fichier"),
                          named_by=source.get("nomme_par")),
            probant=tuple(item.get("probants", ())), paginated=paginated,
            header=tuple((pages or {}).get("entete", {}).items()), owner=item.get("proprietaire"),
            label=item.get("libelle", item["nom"]), path_fields=self.path_fields(item, where, placeholders))

    def path_fields(self, item: dict[str, Any], where: str,
                    placeholders: list[str]) -> tuple[tuple[str, str], ...]:
        """``egal_au_chemin``: each field names a placeholder of the collection's path."""
        declared = item.get("egal_au_chemin", {})
        for name, placeholder in declared.items():
            self.check_field((item["nom"],), declared, name, f"{where}.egal_au_chemin.{name}", name)
            if placeholder not in placeholders:
                self.fail(declared, name, f"{where}.egal_au_chemin.{name}", f"{{{placeholder}}} is not a "
                          f"placeholder of {item['chemin']}")
        return tuple(declared.items())

    def link(self, index: int, k: int, source: str, item: dict[str, Any], names: set[str]) -> Link:
        if item["vers"] not in names:
            self.fail(item, "vers", f"collections[{index}].liens[{k}].vers", f"{item['vers']!r} is not a "
                      "collection of this track")
        for j, name in enumerate(item.get("memes", ())):  # the citing record and the cited one both hold it
            where = f"collections[{index}].liens[{k}].memes[{j}]"
            self.check_field((source, item["vers"]), item["memes"], j, where, name)
        return Link(source=source, field=item["champ"], target=item["vers"], back=item.get("retour"),
                    mismatch=item.get("incoherence"), first_own_page=item.get("premiere_page_propre", False),
                    belongs=item.get("appartient", False), same=tuple(item.get("memes", ())),
                    same_warns=item.get("memes_avertissement", False))

    def date_order(self, index: int, item: dict[str, Any], names: set[str]) -> DateOrder:
        if item["collection"] not in names:
            self.fail(item, "collection", f"ordres_de_dates[{index}].collection", f"{item['collection']!r} is "
                      "not a collection of this track")
        for key in ("debut", "fin"):
            self.check_field((item["collection"],), item, key, f"ordres_de_dates[{index}].{key}", item[key])
        return DateOrder(item["collection"], item["debut"], item["fin"], item.get("erreur", False))

    def vocabulary(self, index: int, item: dict[str, Any], names: set[str]) -> Vocabulary:
        for k, name in enumerate(item["champs"]):
            if name.split(".", 1)[0] not in names:
                self.fail(item["champs"], k, f"vocabulaires[{index}].champs[{k}]", f"{name!r} does not start "
                          "with a collection of this track")
        return Vocabulary(item["nom"], item["cle"], tuple(item["champs"]), item.get("libelle", item["nom"]))

    def graph(self, item: dict[str, Any], names: set[str], links: tuple[Link, ...]) -> GraphSpec:
        declared = {link.follow_name for link in links if link.follow_name}
        for k, name in enumerate(item["suivre"]):
            if name not in declared:
                self.fail(item["suivre"], k, f"graphe.suivre[{k}]", f"{name!r} is not a declared link "
                          "(collection.champ, or collection.entrees[].champ of a paginated one, of a "
                          "collection's liens)")
        for k, name in enumerate(item.get("partagees", [])):
            if name not in names:
                self.fail(item["partagees"], k, f"graphe.partagees[{k}]", f"{name!r} is not a collection of "
                          "this track")
        common = []
        for k, entry in enumerate(item["listes_communes"]):
            where = f"graphe.listes_communes[{k}]"
            for key in ("collection", "noms_de"):
                if key in entry and entry[key] not in names:
                    self.fail(entry, key, f"{where}.{key}", f"{entry[key]!r} is not a collection of this track")
            ways = ("champ" in entry) + ("noms" in entry) + ("toutes_les_entrees" in entry)
            if ("champ" in entry) != ("egal" in entry) or ("noms" in entry) != ("noms_de" in entry) or ways != 1:
                self.fail(entry, None, where, "say which entries concern a task: champ and egal, noms and "
                          "noms_de, or toutes_les_entrees")
            common.append(CommonList(entry["collection"], tuple(entry["premiere_page"].items()),
                                     entry.get("champ"), entry.get("egal"), tuple(entry.get("noms", ())),
                                     entry.get("noms_de"), entry.get("titre", entry["collection"]),
                                     entry.get("toutes_les_entrees", False)))
        start = item.get("depart")
        if start is not None and start["collection"] not in names:
            self.fail(start, "collection", "graphe.depart.collection", f"{start['collection']!r} is not a "
                      "collection of this track")
        if start is None and not common:
            self.fail(item, None, "graphe", "a graph needs a depart or at least one common list")
        return GraphSpec(start["champ"] if start else None, start["collection"] if start else None,
                         tuple(item["suivre"]), tuple(common), item["description"], item["concerne"],
                         tuple(item.get("partagees", ())))
