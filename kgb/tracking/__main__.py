"""Rebuild the MLflow store from the event logs alone.

    python -m kgb.tracking rebuild OUTPUTS_DIR --tracking-uri URI [--experiment NAME] [--jobs N]

Jobs are projected in parallel processes where there is enough to do: each job's trial
runs go into the store in one transaction, so the store's single writer is busy only a
small part of the time; reading the logs and preparing runs and artifacts is the rest.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events
from kgb.tracking.mlflow_projection import MlflowProjection

PARALLEL_FROM_BYTES = 8_000_000  # smaller sweeps rebuild faster than worker processes start

_projection: MlflowProjection | None = None  # one per worker process


def _open(uri: str, experiment: str) -> None:
    global _projection
    _projection = MlflowProjection(uri, experiment, background=False)


def _project(path: Path, blobs: Path) -> str:
    assert _projection is not None
    _projection.project(read_events(path), BlobStore(blobs))
    return path.parent.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.tracking")
    sub = parser.add_subparsers(dest="command", required=True)
    rebuild = sub.add_parser("rebuild", help="project every events.jsonl under OUTPUTS_DIR into MLflow")
    rebuild.add_argument("outputs", type=Path)
    rebuild.add_argument("--tracking-uri", required=True)
    rebuild.add_argument("--experiment", default="kgb")
    rebuild.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per core for a large sweep)")
    args = parser.parse_args(argv)
    logs = sorted(args.outputs.glob("jobs/*/events.jsonl"))
    if not logs:
        print(f"no event logs under {args.outputs}/jobs/", file=sys.stderr)
        return 1
    workers = args.jobs
    if workers <= 0:
        large = sum(p.stat().st_size for p in logs) >= PARALLEL_FROM_BYTES
        workers = min(os.cpu_count() or 1, len(logs)) if large else 1
    _open(args.tracking_uri, args.experiment)  # the store's schema and experiment, made once, here
    blobs = args.outputs / "blobs"
    if workers == 1:
        for i, path in enumerate(logs, 1):
            print(f"[{i}/{len(logs)}] {_project(path, blobs)}", flush=True)
        return 0
    # spawned, not forked: a forked child would share the parent's database connections
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_open, initargs=(args.tracking_uri, args.experiment)) as pool:
        futures = [pool.submit(_project, path, blobs) for path in logs]
        for i, done in enumerate(as_completed(futures), 1):
            print(f"[{i}/{len(logs)}] {done.result()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
