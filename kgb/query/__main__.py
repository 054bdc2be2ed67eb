"""Query the MLflow store.

    python -m kgb.query leaderboard [--tracking-uri URI] [--format table|csv|md]
    python -m kgb.query best --op aten::softmax --chip nvidia --dest DIR [--tracking-uri URI]
    python -m kgb.query plots [--dest outputs/plots] [--tracking-uri URI]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgb.query import DEFAULT_URI, trial_runs
from kgb.query.best import best_run, download
from kgb.query.leaderboard import render, rows
from kgb.query.plots import draw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.query", description="Query kgb results in MLflow.")
    sub = parser.add_subparsers(dest="command", required=True)
    board = sub.add_parser("leaderboard", help="one row per method x model x source x chip")
    board.add_argument("--tracking-uri", default=DEFAULT_URI)
    board.add_argument("--format", choices=("table", "csv", "md"), default="table")
    best = sub.add_parser("best", help="download the best kernel of an operator on a chip")
    best.add_argument("--op", required=True, help="operator id, e.g. aten::softmax")
    best.add_argument("--chip", required=True)
    best.add_argument("--dest", required=True, type=Path)
    best.add_argument("--tracking-uri", default=DEFAULT_URI)
    plots = sub.add_parser("plots", help="fast_p, per-operator speedup and accuracy-vs-spend figures")
    plots.add_argument("--dest", type=Path, default=Path("outputs/plots"))
    plots.add_argument("--tracking-uri", default=DEFAULT_URI)
    args = parser.parse_args(argv)

    if args.command == "leaderboard":
        table = rows(trial_runs(args.tracking_uri))
        if not table:
            print(f"no kgb trial runs in {args.tracking_uri}", file=sys.stderr)
            return 1
        sys.stdout.write(render(table, args.format))
        return 0

    if args.command == "plots":
        runs = trial_runs(args.tracking_uri)
        if not runs:
            print(f"no kgb trial runs in {args.tracking_uri}", file=sys.stderr)
            return 1
        for path in draw(runs, args.dest):
            print(path)
        return 0

    runs = trial_runs(args.tracking_uri, f"tags.`kgb.op` = '{args.op}' and tags.`kgb.chip` = '{args.chip}'")
    run = best_run(runs)
    if run is None:
        print(f"no correct kernel for {args.op} on {args.chip} among {len(runs)} trial(s) in {args.tracking_uri}", file=sys.stderr)
        return 1
    paths = download(args.tracking_uri, run, args.dest)
    speed = run.data.metrics.get("speedup")
    how = f"speedup {speed:.2f}x" if speed else "correct, not timed"
    tags = run.data.tags
    print(f"{args.op} on {args.chip}: {how} (method {tags['kgb.method']}, model {tags['kgb.model']}, run {run.info.run_id})")
    for p in paths:
        print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
