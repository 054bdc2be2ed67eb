"""The paper's tables, computed from the store's trials.

- accuracy: per method, model, source and chip (the paper's Table 2): operators run,
  accuracy with its 95% Wilson interval, fast_0.8 / fast_1.0 / fast_1.5, and the
  geometric mean speedup over correct, timed operators with its 95% bootstrap interval;
- chips: the same per method, model and chip over all sources (Table 3);
- cost: per method and model, tokens and USD in all and per success (the cost table).

The unit is the operator: with several samples an operator is correct if any sample is,
at its best speedup (docs/operators.md's definitions, as on the leaderboard). Each table is
written as markdown, CSV and LaTeX; `report.html` shows them with the plots.

The operators are counted as the leaderboard counts them (kgb.query.scope): `not judged`
says how many operators of a row a job interrupted or not finished left unjudged (the row's
rates are over those judged), `removed` how many are no longer in the source and left out,
and the cost table's `replayed tokens` what a replay model's calls recorded, not spend. A
table's notes (under it in markdown and HTML) say so where a row has any.
"""

from __future__ import annotations

import csv
import html
import io
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgb.evaluate.verdict import geomean
from kgb.query.leaderboard import best_speedups, by_job
from kgb.query.scope import EVERYTHING, Scope
from kgb.query.stats import Interval, bootstrap_geomean, wilson
from kgb.tracking.projections import FAST_THRESHOLDS
from kgb.tracking.summary import TrialRow, reports_speed

JUDGED, REMOVED = "judged", "removed"  # OpResult.state, beside kgb.query.scope.End's values


@dataclass(frozen=True)
class OpResult:
    """One operator of one job: the unit every table counts."""

    method: str  # with its parameters where they are not the defaults (TrialRow.method_label)
    model: str
    source: str
    chip: str
    settings: str  # what its verdicts were judged under: the figures tell such jobs apart
    correct: bool
    speedup: float  # best over its samples; 0.0 where not correct or not timed
    tokens: int  # paid for
    cost_usd: float
    replayed_tokens: int = 0  # a replay model's calls: recorded earlier, not paid
    # JUDGED; REMOVED (no longer in the source: left out); or, for an operator a job set out to
    # judge and no job judged, how that job ended (kgb.query.scope.End: interrupted, unfinished)
    state: str = JUDGED

    @property
    def judged(self) -> bool:
        return self.state == JUDGED

    @property
    def unjudged(self) -> bool:
        return self.state not in (JUDGED, REMOVED)


def op_results(trials: list[TrialRow], scope: Scope = EVERYTHING) -> list[OpResult]:
    """Every operator of every row: those judged, then those not judged and those removed,
    which the tables count apart and the figures leave out."""
    results = []
    for key, job in by_job(trials, scope).items():
        best = best_speedups(job)
        for op in job.per_op:
            results.append(OpResult(*key, op in best, best.get(op, 0.0), *job.spent(op), job.replayed_tokens(op)))
        results += [OpResult(*key, False, 0.0, 0, 0.0, state=end.value) for end in job.unjudged.values()]
        results += [OpResult(*key, False, 0.0, 0, 0.0, state=REMOVED) for _ in job.removed]
    return results


@dataclass(frozen=True)
class Column:
    name: str  # the CSV header and the LaTeX/markdown header
    kind: str  # "text", "int", "share", "ratio", "usd"


@dataclass(frozen=True)
class Table:
    name: str  # file stem: accuracy, chips, cost
    title: str
    columns: tuple[Column, ...]
    rows: list[list[object]]  # cells: str, int, float, Interval or None
    notes: tuple[str, ...] = ()  # what a column means, where a row needs it: under the table


def _speed_cells(everything: list[OpResult]) -> list[object]:
    group = [r for r in everything if r.judged]  # the rates are over the operators judged
    n = len(group)
    correct = sum(r.correct for r in group)
    timed = [r.speedup for r in group if r.correct and r.speedup > 0]
    cells: list[object] = [n, correct, correct / n if n else None, wilson(correct, n)]
    timed_any = any(reports_speed(r.settings, (r.speedup,)) for r in group)  # else fast_p says nothing
    cells += [sum(r.speedup > p for r in group) / n if n and timed_any else None for p in FAST_THRESHOLDS]
    cells += [len(timed), geomean(timed) if timed else None, bootstrap_geomean(timed)]
    cells += [sum(r.unjudged for r in everything), sum(r.state == REMOVED for r in everything)]
    return cells


SPEED_COLUMNS = (
    Column("operators", "int"), Column("correct", "int"), Column("accuracy", "share"),
    Column("accuracy 95% CI", "share"),
    *(Column(f"fast_{p}", "share") for p in FAST_THRESHOLDS),
    Column("timed", "int"), Column("geomean speedup", "ratio"), Column("geomean 95% CI", "ratio"),
    Column("not judged", "int"), Column("removed", "int"),
)
NOT_JUDGED = ("not judged: operators that a job interrupted (Ctrl-C) or not finished (running, or killed) set out "
              "to judge and no job judged: the row's operators, accuracy, fast_p and speedups count only those "
              "judged; the job's command run again judges the rest")
REMOVED_NOTE = "removed: operators no longer in the source (operators/), whose trials are left out"
REPLAYED_NOTE = ("replayed tokens: a replay model's calls (model=replay) answer from completions logged earlier, "
                 "for free: their recorded tokens are not spend")


def _notes(results: list[OpResult], *, spend: bool = False) -> tuple[str, ...]:
    """The notes a table needs: only for what some of its rows have."""
    if spend:
        return (REPLAYED_NOTE,) if any(r.replayed_tokens for r in results) else ()
    return (*((NOT_JUDGED,) if any(r.unjudged for r in results) else ()),
            *((REMOVED_NOTE,) if any(r.state == REMOVED for r in results) else ()))


def _grouped(results: list[OpResult], key: Callable[[OpResult], tuple[str, ...]]) -> dict[tuple[str, ...], list[OpResult]]:
    groups: dict[tuple[str, ...], list[OpResult]] = defaultdict(list)
    for r in results:
        groups[key(r)].append(r)
    return dict(sorted(groups.items()))


def tables(results: list[OpResult]) -> list[Table]:
    """Every row is of one judging setting (its `settings` line): jobs judged under others (other
    cases, a compile check, another judge) are other rows, as on the leaderboard; pooled, a
    sweep's operators were counted once per setting (214 of 210, session 45's user walk)."""
    text = lambda *names: tuple(Column(n, "text") for n in names)
    accuracy = Table(
        "accuracy", "Accuracy and speed per method, source and chip (Table 2)",
        text("method", "model", "source", "chip", "settings") + SPEED_COLUMNS,
        [[*k, *_speed_cells(g)] for k, g in
         _grouped(results, lambda r: (r.method, r.model, r.source, r.chip, r.settings)).items()],
        _notes(results),
    )
    chips = Table(
        "chips", "Accuracy and speed per chip, all sources (Table 3)",
        text("method", "model", "chip", "settings") + SPEED_COLUMNS,
        [[*k, *_speed_cells(g)] for k, g in _grouped(results, lambda r: (r.method, r.model, r.chip, r.settings)).items()],
        _notes(results),
    )
    cost_rows = []
    for k, everything in _grouped(results, lambda r: (r.method, r.model, r.settings)).items():
        g = [r for r in everything if r.judged]
        successes = sum(r.correct for r in g)
        tokens, usd = sum(r.tokens for r in g), sum(r.cost_usd for r in g)
        cost_rows.append([*k, len(g), successes, tokens, usd,
                          tokens / successes if successes else None, usd / successes if successes else None,
                          sum(r.replayed_tokens for r in g)])
    cost = Table(
        "cost", "Model spend per method (cost table)",
        text("method", "model", "settings") + (Column("operators", "int"), Column("successes", "int"), Column("tokens", "int"),
                                   Column("USD", "usd"), Column("tokens per success", "int"), Column("USD per success", "usd"),
                                   Column("replayed tokens", "int")),
        cost_rows, _notes(results, spend=True),
    )
    return [accuracy, chips, cost]


# --- formats ---------------------------------------------------------------------

def _number(value: object, kind: str) -> str:
    if value is None:
        return ""
    if isinstance(value, Interval):
        return f"[{_number(value.low, kind)}, {_number(value.high, kind)}]"
    if kind == "share":
        return f"{value:.3f}"
    if kind == "ratio":
        return f"{value:.2f}"
    if kind == "usd":
        return f"{value:.4f}"
    if kind == "int":
        return f"{value:,.0f}" if isinstance(value, float) else f"{value:,}"
    return str(value)


def markdown(table: Table) -> str:
    lines = [f"**{table.title}**", "", "| " + " | ".join(c.name for c in table.columns) + " |",
             "|" + "|".join("---" if c.kind == "text" else "---:" for c in table.columns) + "|"]
    lines += ["| " + " | ".join(_number(v, c.kind) for v, c in zip(row, table.columns, strict=True)) + " |" for row in table.rows]
    for note in table.notes:  # a paragraph each, under the table
        lines += ["", note]
    return "\n".join(lines) + "\n"


def csv_text(table: Table) -> str:
    """Plain numbers (intervals as two columns) for other tools."""
    header: list[str] = []
    for c in table.columns:
        header += [f"{c.name} low", f"{c.name} high"] if "CI" in c.name else [c.name]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in table.rows:
        cells: list[object] = []
        for value, c in zip(row, table.columns, strict=True):
            if "CI" in c.name:
                cells += [value.low, value.high] if isinstance(value, Interval) else ["", ""]
            else:
                cells.append("" if value is None else value)
        writer.writerow(cells)
    return out.getvalue()


LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex(table: Table) -> str:
    """A booktabs tabular, with each interval under its value's column."""
    align = "".join("l" if c.kind == "text" else "r" for c in table.columns)
    lines = [f"% {table.title}", f"\\begin{{tabular}}{{{align}}}", "\\toprule",
             " & ".join(_latex_escape(c.name) for c in table.columns) + " \\\\", "\\midrule"]
    for row in table.rows:
        lines.append(" & ".join(_latex_escape(_number(v, c.kind)) for v, c in zip(row, table.columns, strict=True)) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    lines += [f"% {note}" for note in table.notes]
    return "\n".join(lines) + "\n"


def html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c.name)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td class='{c.kind}'>{html.escape(_number(v, c.kind))}</td>" for v, c in zip(row, table.columns, strict=True)) + "</tr>"
        for row in table.rows
    )
    notes = "".join(f"<p class='note'>{html.escape(note)}</p>\n" for note in table.notes)
    return f"<h2>{html.escape(table.title)}</h2>\n<table><tr>{head}</tr>\n{body}</table>\n{notes}"


def _of(experiments: tuple[str, ...]) -> str:
    """Which campaigns the page's trials came from: a report of one store's two experiments
    must not read as one campaign's."""
    if not experiments:
        return ""
    return f" of MLflow experiment{'s' * (len(experiments) > 1)} " + ", ".join(html.escape(e) for e in experiments)


STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
         "td,th{border:1px solid #ccc;padding:3px 8px}td.text{text-align:left}td{text-align:right}"
         "figure{display:inline-block;margin:0 1em 1em 0}img{max-width:720px}")


def write(results: list[OpResult], trials: int, dest: Path, figures: list[tuple[str, Path | str]],
          experiments: tuple[str, ...] = ()) -> list[Path]:
    """Write every table in three formats and report.html; figures are (title, image path
    or the reason it could not be drawn), trials the number of trials read, experiments the
    MLflow experiments (campaigns) they came from, which the page names. Returns the paths
    written."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    made = tables(results)
    for table in made:
        for suffix, text in (("md", markdown(table)), ("csv", csv_text(table)), ("tex", latex(table))):
            path = dest / f"{table.name}.{suffix}"
            path.write_text(text)
            written.append(path)
    parts = [f"<!doctype html><meta charset='utf-8'><title>kgb report</title><style>{STYLE}</style>",
             f"<h1>kgb report</h1><p>{trials} trial(s){_of(experiments)}. Intervals are 95%: Wilson for accuracy, "
             "a bootstrap over operators for the geometric mean speedup.</p>"]
    parts += [html_table(t) for t in made]
    parts.append("<h2>Plots</h2>")
    for title, figure in figures:
        if isinstance(figure, Path):
            rel = figure.relative_to(dest) if figure.is_relative_to(dest) else figure.resolve()
            parts.append(f"<figure><img src='{html.escape(str(rel))}' alt='{html.escape(title)}'>"
                         f"<figcaption>{html.escape(title)}</figcaption></figure>")
        else:
            parts.append(f"<p><b>{html.escape(title)}</b>: not drawn: {html.escape(figure)}</p>")
    page = dest / "report.html"
    page.write_text("\n".join(parts) + "\n")
    written.append(page)
    return written
