"""The ``corpus-log-report/1`` JSON document of a report (docs/operating.md documents its fields)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.base.jsonvalue import JsonObject
from generator.observe.log_report.counts import NO_TRACK, OTHERS, Bucket, Report

REPORT_FORMAT = "corpus-log-report/1"


def report_document(report: Report, top: int) -> dict[str, Any]:
    """The documented ``corpus-log-report/1`` document (docs/operating.md)."""
    client_roles = report.client_roles
    hours = []
    for hour in report.hours():
        by_role = {role: report.buckets[(hour, role)].requests
                   for role in sorted({r for h, r in report.buckets if h == hour})}
        entry = _bucket_json(report.merged(hour, client_roles), top, report)
        entry = {"hour": hour, "lines_by_role": by_role, **entry}
        if report.replica_roles():
            replicas = report.merged(hour, report.replica_roles())
            entry["replicas"] = {"requests": replicas.requests, "statuses": _statuses(replicas.statuses)}
        hours.append(entry)
    total = report.merged(None, client_roles)
    return {
        "format": REPORT_FORMAT,
        "since": report.since.isoformat().replace("+00:00", "Z") if report.since else None,
        "until": report.until.isoformat().replace("+00:00", "Z") if report.until else None,
        "client_roles": list(client_roles),
        "files": report.files,
        "lines_outside_period": report.outside,
        "malformed": {"count": report.malformed_count,
                      "listed": [{"file": m.file, "line": m.line, "reason": m.reason}
                                 for m in report.malformed]},
        "total": _bucket_json(total, top, report),
        "tracks": tracks_json(report, total, top),
        "probe_agent": report.probe_agent.pattern,
        "hours": hours,
        "findings": report.findings(),
    }


def tracks_json(report: Report, total: Bucket, top: int) -> list[JsonObject]:
    """One entry per track (its own manifest): its requests and statuses (of ``total``, the clients' bucket),
    the absents asked for, and its declared absents each with how often it was asked; then the requests no
    track serves (``piste`` null)."""
    asked_of: dict[str, list[tuple[str, int]]] = {}
    for path, count in total.absent.items():  # each path's track looked up once, not once per track
        track = report.kinds.track_of(path) if path != OTHERS else None
        if track is not None:
            asked_of.setdefault(track.piste, []).append((path, count))
    out = []
    for track in report.kinds.tracks:
        asked = sorted(asked_of.get(track.piste, []), key=lambda pc: (-pc[1], pc[0]))
        out.append({
            "piste": track.piste, "manifest": track.manifest, **_track_counts(total, track.piste),
            "absent": {"count": total.absent_by_track[track.piste],
                       "paths": [{"path": p, "count": c, "declared": p in track.declared_absent}
                                 for p, c in asked[:top]]},
            "declared_absent": [{"path": p, "asked": total.absent.get(p, 0)}
                                for p in sorted(track.declared_absent)],
        })
    if any(piste == NO_TRACK for piste, _ in total.by_track):
        out.append({"piste": None, "manifest": None, **_track_counts(total, NO_TRACK)})
    return out


def _track_counts(bucket: Bucket, piste: str) -> dict[str, Any]:
    statuses = Counter({status: n for (p, status), n in bucket.by_track.items() if p == piste})
    return {"requests": sum(statuses.values()), "statuses": _statuses(statuses)}


def _statuses(statuses: Counter[int]) -> dict[str, int]:
    return {str(code): statuses[code] for code in sorted(statuses)}


def _bucket_json(bucket: Bucket, top: int, report: Report) -> dict[str, object]:
    return {
        "requests": bucket.requests,
        "statuses": _statuses(bucket.statuses),
        "forbidden_by_user_agent": [
            {"user_agent": agent, "count": count, "proxy": report.is_proxy(agent)[0] if agent != OTHERS else False}
            for agent, count in bucket.forbidden_agents.top(top)],
        "unavailable": bucket.statuses[503],
        "failovers": {"count": bucket.failovers, "recovered": bucket.failovers_recovered,
                      "failed_tries": [{"upstream": key.rsplit(" ", 1)[0], "status": key.rsplit(" ", 1)[-1],
                                        "count": count} if key != OTHERS else {"upstream": OTHERS, "count": count}
                                       for key, count in bucket.failed_attempts.top(top)]},
        "absent": {"count": sum(bucket.absent.values()),
                   "paths": [{"path": p, "count": c, "declared": p in report.kinds.declared_absent}
                             for p, c in bucket.absent.top(top)]},
        "probes": {"count": sum(bucket.probes.values()), "statuses": _statuses(bucket.probes)},
        "unknown": {"count": sum(bucket.unknown.values()),  # the clients' 404s: capped keys, exact total
                    "uris": [{"uri": u, "count": c} for u, c in bucket.unknown.top(top)]},
    }
