"""Rebuild the MLflow store from the event logs alone.

    python -m kgb.tracking rebuild OUTPUTS_DIR --tracking-uri URI [--experiment NAME]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events
from kgb.tracking.mlflow_projection import MlflowProjection


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.tracking")
    sub = parser.add_subparsers(dest="command", required=True)
    rebuild = sub.add_parser("rebuild", help="project every events.jsonl under OUTPUTS_DIR into MLflow")
    rebuild.add_argument("outputs", type=Path)
    rebuild.add_argument("--tracking-uri", required=True)
    rebuild.add_argument("--experiment", default="kgb")
    args = parser.parse_args(argv)
    logs = sorted(args.outputs.glob("jobs/*/events.jsonl"))
    if not logs:
        print(f"no event logs under {args.outputs}/jobs/", file=sys.stderr)
        return 1
    projection = MlflowProjection(args.tracking_uri, args.experiment)
    blobs = BlobStore(args.outputs / "blobs")
    for i, path in enumerate(logs, 1):
        projection.project(read_events(path), blobs)
        print(f"[{i}/{len(logs)}] {path.parent.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
