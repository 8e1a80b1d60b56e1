"""The readable report: one row per hour, then the details that name agents, paths and replicas."""

from __future__ import annotations

from typing import Any

from generator.observe.log_report.counts import Report, pairs_text
from generator.observe.log_report.document import report_document


def render_text(report: Report, top: int) -> str:
    """The readable report: one row per hour, then the details that name agents, paths and replicas."""
    data = report_document(report, top)
    lines_read = sum(f["lines"] for f in data["files"])
    out = [f"corpus log-report: {len(data['files'])} file(s), {lines_read} line(s), {data['malformed']['count']} "
           f"malformed, {data['lines_outside_period']} outside the period; clients' answers: "
           f"{'+'.join(data['client_roles']) or 'none'} lines"]
    if report.since or report.until:
        out.append(f"period: {data['since'] or '...'} to {data['until'] or '...'} (UTC)")
    header = ("hour (UTC)", "requests", "2xx", "403", "404", "503", "other", "failover", "absent", "replicas")
    rows = [header]
    for entry in [*data["hours"], {"hour": "total", **data["total"]}]:
        statuses = {int(k): v for k, v in entry["statuses"].items()}
        ok = sum(v for k, v in statuses.items() if 200 <= k < 300)
        other = entry["requests"] - ok - sum(statuses.get(k, 0) for k in (403, 404, 503))
        replicas = entry.get("replicas", {}).get("requests", "")
        if entry["hour"] == "total" and report.replica_roles():
            replicas = report.merged(None, report.replica_roles()).requests
        rows.append((entry["hour"].replace("T", " "), entry["requests"], ok, statuses.get(403, 0),
                     statuses.get(404, 0), statuses.get(503, 0), other, entry["failovers"]["count"],
                     entry["absent"]["count"], replicas))
    out.append("")
    out.extend(_table(rows))
    probes = data["total"]["probes"]
    out.append("")
    out.append(f"probes: {probes['count']} call(s) of corpus verify and curl (User-Agent matching "
               f"{data['probe_agent']!r}): {pairs_text(probes['statuses'].items())}; ours, never the proxy: "
               "counted in the table above, in no list below")
    out.extend(_tracks(data["tracks"]))

    out.extend(_section("statuses", [(h["hour"], pairs_text(h["statuses"].items()))
                                     for h in data["hours"] if h["statuses"]]))
    out.extend(_section("403 by user agent (! = the proxy: instrument defect, spec §4.1)", [
        (h["hour"], f"{'!' if a['proxy'] else ' '} {a['count']:>7}  {a['user_agent'] or '(none)'}")
        for h in data["hours"] for a in h["forbidden_by_user_agent"]]))
    out.extend(_section("failovers and failed tries", [
        (h["hour"], f"{h['failovers']['count']} failover(s), {h['failovers']['recovered']} recovered; "
                    + "failed tries: " + (", ".join(f"{t['upstream']} {t.get('status', '')} x{t['count']}"
                                 for t in h["failovers"]["failed_tries"]) or "none"))
        for h in data["hours"] if h["failovers"]["count"] or h["failovers"]["failed_tries"]]))
    out.extend(_section("absent paths asked for (200, existe: false; * = declared absent)", [
        (h["hour"], f"{p['count']:>7}  {p['path']}{' *' if p['declared'] else ''}")
        for h in data["hours"] for p in h["absent"]["paths"]]))
    out.extend(_section("unknown paths (404)", [
        (h["hour"], f"{u['count']:>7}  {u['uri']}") for h in data["hours"] for u in h["unknown"]["uris"]]))
    findings = data["findings"]
    out.append("")
    out.append(f"findings ({sum(f['defect'] for f in findings)} instrument defect(s), spec §4.1):" if findings
               else "findings: none")
    for f in findings:
        out.append(f"  {'DEFECT' if f['defect'] else 'note  '} {f['hour'] or '':17} {f['kind']}: {f['message']}")
    if data["malformed"]["count"]:
        out.append("")
        out.append(f"malformed lines ({data['malformed']['count']}, first {len(data['malformed']['listed'])}):")
        out.extend(f"  {m['file']}:{m['line']}: {m['reason']}" for m in data["malformed"]["listed"])
    return "\n".join(out) + "\n"


def _tracks(tracks: list[dict[str, Any]]) -> list[str]:
    """One section per track, each path counted in its own track (``*``: declared absent of that track)."""
    out = []
    for t in tracks:
        statuses = pairs_text(t["statuses"].items())
        if t["piste"] is None:
            out += ["", f"no track ({t['requests']} request(s) no track serves): {statuses}"]
            continue
        out += ["", f"track {t['piste']} ({t['manifest']}): {t['requests']} request(s): {statuses}; "
                    f"{t['absent']['count']} absent asked for"]
        out += [f"  {p['count']:>7}  {p['path']}{' *' if p['declared'] else ''}" for p in t["absent"]["paths"]]
        out.append("  declared absents: " + (", ".join(f"{d['path']} * (asked {d['asked']})"
                                                       for d in t["declared_absent"]) or "none"))
    return out


def _table(rows: list[tuple[Any, ...]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w) for i, (v, w) in enumerate(zip(row, widths,
                                                                                                    strict=True)))
            for row in rows]


def _section(title: str, rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return []
    return ["", f"{title}:", *(f"  {hour.replace('T', ' ')}  {text}" for hour, text in rows)]
