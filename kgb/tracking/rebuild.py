"""Rebuilding the MLflow store from the event logs alone (`python -m kgb.tracking rebuild`).

Jobs are projected in parallel processes where there is enough to do: each job's trial
runs go into the store in one transaction, so the store's single writer is busy only a
small part of the time; reading the logs and preparing runs and artifacts is the rest.
The workers' functions live here, in an importable module, because spawned processes
import them by name.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events
from kgb.tracking.mlflow_projection import MlflowProjection

PARALLEL_FROM_BYTES = 8_000_000  # smaller sweeps rebuild faster than worker processes start

_projection: MlflowProjection | None = None  # one per process


def _open(uri: str, experiment: str) -> None:
    global _projection
    _projection = MlflowProjection(uri, experiment, background=False)


def _project(path: Path, blobs: Path) -> str:
    assert _projection is not None
    _projection.project(read_events(path), BlobStore(blobs))
    return path.parent.name


def rebuild(logs: list[Path], blobs: Path, uri: str, experiment: str, workers: int = 0) -> Iterator[str]:
    """Project each log into the store; yields each job's id as it is done."""
    if workers <= 0:
        large = sum(p.stat().st_size for p in logs) >= PARALLEL_FROM_BYTES
        workers = min(os.cpu_count() or 1, len(logs)) if large else 1
    _open(uri, experiment)  # the store's schema and experiment, made once, here
    if workers == 1:
        for path in logs:
            yield _project(path, blobs)
        return
    # spawned, not forked: a forked child would share the parent's database connections
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_open, initargs=(uri, experiment)) as pool:
        for done in as_completed([pool.submit(_project, path, blobs) for path in logs]):
            yield done.result()
