"""The top of the review report (render.report.page): the answer (the bottom line, one line
per series, the meaning of each bound shown, the serving sentences), the headline tiles and
the findings, as plain records for the template, in the run's language."""

from __future__ import annotations

from pipeline.calibration.estimate import unused_warnings
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.report.tables import records
from pipeline.render.text import answer
from pipeline.render.text.serving import serving_sentences
from pipeline.summary.turns import MIXED


def findings(analysis: Record) -> dict:
    found = dict(analysis.summary.findings)
    for key in ("slowest", "comm", "nofit", "measured_off", "measured_below"):
        found[key] = records(found[key])
    found["comm_none"] = no_comm(analysis.summary.scenarios, int(found["collective_rows"]))
    return found


def no_comm(scenarios: int, collectives: int) -> str:
    """summary.findings.no_comm_sentence (the summary's, in English) in the current language."""
    if not scenarios:
        return _("None: there are no scenarios.")
    if not collectives:
        return _("None: every scenario is compute-bound.")
    if collectives == scenarios:
        if scenarios == 1:
            return _("1 collective row: network-bound by nature (no FLOPs).")
        return _("{n} collective rows: network-bound by nature (no FLOPs).", n=fmt.count(scenarios))
    return _(
        "None: besides the collective rows, every other scenario ({n}) is compute-bound.",
        n=fmt.count(scenarios - collectives),
    )


def tiles(analysis: Record) -> list[dict]:
    """The headline tiles: series and scenarios apart; per bound the series it holds (the unit
    people decide on), its scenarios secondary; series not fitting; the rejected rows. A bound
    or misfit no series has gets no tile (the bottom line says so)."""
    summary, bottom = analysis.summary, analysis.summary.bottom
    n, per = summary.scenarios, bottom.get("bounds", {})
    labels = {"compute": _("compute-bound"), "memory": _("memory-bound")}
    labels["network"] = _("network-bound")
    scenarios = answer.scenarios_text
    tiles = [tile("series", bottom.get("series", 0), _("series"), scenarios(n))]
    for b in BOUNDS:
        if per.get(b):
            detail = _("series · {scenarios}", scenarios=scenarios(summary.bounds[b]))
            tiles.append(tile(b, per[b], labels[b], detail))
    if per.get(MIXED):
        if bottom.get("changing", 0) == per[MIXED]:  # each one: memory, then compute
            label, detail = _("turn compute-bound"), _("series, as the batch grows")
        else:
            label, detail = _("change bound"), _("series, along their sweep")
        tiles.append(tile(MIXED, per[MIXED], label, detail))
    if bottom.get("not_fitting"):
        unfit = _("series · {scenarios}", scenarios=scenarios(summary.not_fitting))
        tiles.append(tile("nofit", bottom["not_fitting"], _("not fitting in HBM"), unfit))
    rejected, rows = summary.rejected_rows, summary.source_rows
    label = _("rejected row") if rejected == 1 else _("rejected rows")
    if rows == 1:
        detail = _("of {n} input row", n=fmt.count(rows))
    else:
        detail = _("of {n} input rows", n=fmt.count(rows))
    tiles.append(tile("rejected", rejected, label, detail))
    return tiles


def tile(key: str, count: int, label: str, detail: str) -> dict:
    return {"key": key, "count": count, "label": label, "detail": detail}


def answer_context(analysis: Record) -> dict:
    """The top of the page: the bottom line, the first series, the meaning of each bound shown."""
    rows = answer.series_rows(analysis)
    shown = {r["bound"] for r in rows}
    if MIXED in shown:  # a series that changes is memory- (or network-) then compute-bound
        shown |= {b for r in rows if r["bound"] == MIXED for b in BOUNDS if b in r["bound_text"]}
    meaning, legend = answer.meaning(), []
    for b in BOUNDS:
        if b in shown:  # "compute-bound: more FLOP/s helps; ..." as label and text
            label, _colon, text = meaning[b].partition(": ")
            legend.append({"bound": b, "label": label, "text": text})
    return {
        "bottom_line": answer.bottom_line(analysis.summary.bottom),
        "serving": serving_sentences(analysis.summary.serving),  # per serve series and model
        "calibration": answer.calibration_sentence(analysis.summary.calibration),
        # a calibration that gives no row an estimate: a warning, said with the calibration
        "calibration_warning": bool(unused_warnings(analysis.summary.calibration)),
        "estimated": any(r.get("estimate") for r in rows),
        "series": rows,
        "series_total": len(analysis.summary.lines),
        "has_critical": any(r["critical"] for r in rows),
        "differing": answer.differing(rows),  # the dtype and chips columns, when they say something
        "meaning": meaning,
        "critical_batch": answer.critical_batch_term(),  # model.roofline.CRITICAL_BATCH
        "words": {b: answer.bound_word(b) for b in (*BOUNDS, MIXED)},  # the bounds as shown
        "labels": {b: answer.bound_label(b) for b in BOUNDS},  # "memory-bound"
        "legend": legend,
    }
