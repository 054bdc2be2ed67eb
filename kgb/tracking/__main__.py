"""Rebuild the MLflow store from the event logs alone.

    python -m kgb.tracking rebuild OUTPUTS_DIR --tracking-uri URI [--experiment NAME] [--jobs N]

Each job goes into the MLflow experiment its runs' config named (`tracking.experiment`),
so that campaigns kept apart stay apart (kgb.tracking.rebuild); `--experiment NAME` puts
every job into NAME instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgb.tracking.mlflow_store import file_store_refusal, server_silence
from kgb.tracking.rebuild import rebuild


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.tracking")
    sub = parser.add_subparsers(dest="command", required=True)
    command = sub.add_parser("rebuild", help="project every events.jsonl under OUTPUTS_DIR into MLflow")
    command.add_argument("outputs", type=Path)
    command.add_argument("--tracking-uri", required=True)
    command.add_argument("--experiment", metavar="NAME",
                         help="put every job into this MLflow experiment (default: each into the experiment its "
                              "runs projected it into, its config's tracking.experiment)")
    command.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per core for a large sweep)")
    args = parser.parse_args(argv)
    uri = args.tracking_uri
    if refusal := file_store_refusal(uri, "--tracking-uri "):
        print(f"error: {refusal}", file=sys.stderr)
        return 1
    if uri.startswith(("http://", "https://")) and (reason := server_silence(uri)):
        print(f"error: no tracking server answers at {uri} ({reason}): check that `mlflow server` runs there",
              file=sys.stderr)
        return 1
    logs = sorted(args.outputs.glob("jobs/*/events.jsonl"))
    if not logs:
        print(f"no event logs under {args.outputs}/jobs/", file=sys.stderr)
        return 1
    done = rebuild(logs, args.outputs / "blobs", args.tracking_uri, args.experiment, args.jobs)
    for i, (job, experiments) in enumerate(done, 1):
        where = (f"experiment{'s' * (len(experiments) > 1)} {', '.join(experiments)}" if experiments
                 else "no run logged: nothing projected")
        print(f"[{i}/{len(logs)}] {job} ({where})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
