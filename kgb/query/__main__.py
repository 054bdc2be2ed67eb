"""Query the tracking store.

    python -m kgb.query leaderboard [--tracking-uri URI] [--experiment NAME] [--format table|csv|md]
    python -m kgb.query report [--dest outputs/report] [--tracking-uri URI] [--experiment NAME] [--no-plots]
    python -m kgb.query best --op aten::softmax --chip nvidia --dest DIR [--tracking-uri URI] [--experiment NAME]
    python -m kgb.query plots [--dest outputs/plots] [--tracking-uri URI] [--experiment NAME]
    python -m kgb.query portability [--reference nvidia] [--tracking-uri URI] [--experiment NAME] [--format table|csv|md]

`--experiment NAME` reads one campaign's MLflow experiment (`tracking.experiment`); given
again, it reads those named together. Without it every experiment of the store is read,
and where the jobs read came from more than one, a line on stderr names them: two
campaigns in one store are never mixed without a word.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgb.query import DEFAULT_URI, StoreError, trial_rows
from kgb.query.scope import EVERYTHING, Scope, current
from kgb.query.store import Contents, read
from kgb.tracking.summary import TrialRow


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.query", description="Query kgb results in the tracking store.")
    sub = parser.add_subparsers(dest="command", required=True)
    uri_help = f"the MLflow store (default {DEFAULT_URI}, where `python run.py` writes)"
    board = sub.add_parser("leaderboard", help="one row per method x model x source x chip")
    board.add_argument("--format", choices=("table", "csv", "md"), default="table")
    report = sub.add_parser("report", help="the paper's tables (markdown, CSV, LaTeX) and an HTML page with the plots")
    report.add_argument("--dest", type=Path, default=Path("outputs/report"))
    report.add_argument("--no-plots", action="store_true", help="tables only")
    best = sub.add_parser("best", help="download the best kernel of an operator on a chip")
    best.add_argument("--op", required=True, help="operator id, e.g. aten::softmax")
    best.add_argument("--chip", required=True)
    best.add_argument("--dest", required=True, type=Path)
    plots = sub.add_parser("plots", help="fast_p, per-operator speedup and accuracy-vs-spend figures")
    plots.add_argument("--dest", type=Path, default=Path("outputs/plots"))
    port = sub.add_parser("portability", help="per method and operator set: accuracy and speedup per chip, "
                          "and the drop against a reference chip (transferred kernels shown by the chip they came from)")
    # None: nvidia, where a store without it just has no comparison; a chip named must be in the store
    port.add_argument("--reference", help="the chip the others are compared with (default nvidia)")
    port.add_argument("--format", choices=("table", "csv", "md"), default="table")
    for command in (board, report, best, plots, port):
        command.add_argument("--tracking-uri", default=DEFAULT_URI, help=uri_help)
        command.add_argument("--experiment", action="append", default=[], metavar="NAME",
                             help="read only this MLflow experiment (a campaign's tracking.experiment); "
                                  "repeat to read several together (default: every experiment of the store)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    uri, experiments = args.tracking_uri, tuple(args.experiment)
    if args.command == "best":
        return best(uri, args.op, args.chip, args.dest, experiments)
    found = read(uri, experiments)
    rows = found.trials
    if not rows and not found.jobs:  # a job with no trial yet is one to show (interrupted, or running its first)
        print(f"error: no kgb job in {where(uri, experiments)}", file=sys.stderr)
        return 1
    if note := merged(found, experiments):
        print(note, file=sys.stderr)
    # what every table counts beyond the trials: today's operators, how each job ended, replays
    scope = current(found.jobs)
    if args.command == "leaderboard":
        from kgb.query.leaderboard import render
        from kgb.query.leaderboard import rows as board

        sys.stdout.write(render(board(rows, scope), args.format))
        return 0
    if args.command == "portability":
        from kgb.query.leaderboard import render
        from kgb.query.portability import COLUMNS, REFERENCE, transfer_sources
        from kgb.query.portability import rows as portability

        if args.reference is not None and (unknown := unknown_chip(where(uri, experiments), args.reference, rows, scope)):
            print(f"error: {unknown}", file=sys.stderr)
            return 1
        table = portability(rows, transfer_sources(uri, experiments), args.reference or REFERENCE, scope)
        sys.stdout.write(render(table, args.format, COLUMNS))
        return 0
    if args.command == "plots":
        from kgb.query.plots import draw
        from kgb.query.report import op_results

        for figure in draw(op_results(rows, scope), args.dest):
            print(figure.path if figure.path else f"{figure.name}: not drawn: {figure.reason}")
        return 0
    from kgb.query.report import op_results, write

    results = op_results(rows, scope)  # the figures and the tables count the same operators
    figures = []
    if not args.no_plots:
        from kgb.query.plots import draw

        figures = [(f.title, f.path or f.reason) for f in draw(results, args.dest / "plots")]
    for path in write(results, len(rows), args.dest, figures, found.experiments):
        print(path)
    return 0


def where(uri: str, experiments: tuple[str, ...]) -> str:
    """The store, and the experiments of it read where some were named: what an error names."""
    if not experiments:
        return uri
    return f"experiment{'s' * (len(experiments) > 1)} {', '.join(experiments)} of {uri}"


def merged(found: Contents, named: tuple[str, ...]) -> str | None:
    """The line that says a query read the jobs of several experiments together, none named:
    a store may keep several campaigns (tracking.experiment), and until session 50 every
    query mixed them without a word. None where one was read, or the user named them."""
    if named or len(found.experiments) < 2:
        return None
    return (f"note: read {len(found.experiments)} experiments of the store together: {', '.join(found.experiments)} "
            "(--experiment NAME reads one)")


def unknown_chip(uri: str, chip: str, trials: list[TrialRow], scope: Scope = EVERYTHING) -> str | None:
    """Why `chip` names no chip of the store, naming those it has (a misspelt `nvidai` gave
    `portability` blank columns and rc 0 until session 49); None where it names one, or the
    store has none to name."""
    chips = {r.chip for r in trials} | {f.info.chip for f in scope.jobs.values() if f.info is not None}
    if chip in chips or not chips:
        return None
    return f"no trial on chip {chip} in {uri}; its chips: {', '.join(sorted(chips))}"


def best(uri: str, op: str, chip: str, dest: Path, experiments: tuple[str, ...] = ()) -> int:
    from kgb.operators import unknown_operator
    from kgb.query.best import best_row, download, read_sources

    found = read(uri, experiments, chip=chip, facts=False)
    rows = found.trials
    if not rows and (unknown := unknown_chip(where(uri, experiments), chip, trial_rows(uri, experiments=experiments))):
        print(f"error: {unknown}", file=sys.stderr)  # a misspelt chip, not a missing kernel
        return 1
    if note := merged(found, experiments):
        print(note, file=sys.stderr)
    row = best_row(rows, op, read_sources(uri, rows, op))
    if row is None:
        tried = sum(r.op == op for r in rows)
        if not tried and (unknown := unknown_operator(op)):  # a misspelt id, not a missing kernel
            print(f"error: {unknown}", file=sys.stderr)
            return 1
        if refuted := sum(r.op == op and r.correct for r in rows):
            print(f"error: no kernel for {op} on {chip} that every trial judging it found correct, among {tried} "
                  f"trial(s) of it in {where(uri, experiments)}: the kernels of {refuted} correct one(s) failed in another", file=sys.stderr)
            return 1
        print(f"error: no correct kernel for {op} on {chip} among {tried} trial(s) of it in {where(uri, experiments)}",
              file=sys.stderr)
        return 1
    try:
        paths = download(uri, row, dest)
    except OSError as exc:  # --dest a file, or a folder this user cannot write
        print(f"error: cannot write the kernel into --dest {dest}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    how = f"speedup {row.speedup:.2f}x" if row.speedup else "correct, not timed"
    print(f"{op} on {chip}: {how} (method {row.method_label}, model {row.model}, run {row.run_id})")
    print(f"  judged under: {row.settings or 'settings not recorded'}")
    for p in paths:
        print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
