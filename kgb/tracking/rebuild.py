"""Rebuilding the MLflow store from the event logs alone (`python -m kgb.tracking rebuild`).

Each job goes back into the MLflow experiment its runs projected it into: a store may keep
several campaigns, one experiment each (`tracking.experiment`), and until session 50 a
rebuild put every job into one (`--experiment`, "kgb" by default), merging them. The log
says which: each run's RunStarted holds the job's resolved config, `tracking.experiment`
among it ("kgb", the default, where a log's config has none). A job run again under another
experiment was projected into both, each as the log stood when the job's last run there
ended (its events up to the next run's RunStarted), and is rebuilt so (experiments_of).
`--experiment NAME` puts every job into NAME instead, whole.

Jobs are projected in parallel processes where there is enough to do: each job's trial
runs go into the store in one transaction, so the store's single writer is busy only a
small part of the time; reading the logs and preparing runs and artifacts is the rest.
The workers' functions live here, in an importable module, because spawned processes
import them by name.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from kgb.config import TrackingConfig
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import Event, RunStarted
from kgb.tracking.log import read_events
from kgb.tracking.mlflow_projection import MlflowProjection

PARALLEL_FROM_BYTES = 8_000_000  # smaller sweeps rebuild faster than worker processes start
DEFAULT_EXPERIMENT = TrackingConfig.experiment  # where a job whose config names none projected

_uri = ""
_projections: dict[str, MlflowProjection] = {}  # by experiment name: one each per process


def experiment_named(config: Mapping[str, Any]) -> str:
    """The experiment a run's resolved config (RunStarted.config) projected its job into."""
    tracking = config.get("tracking")
    name = tracking.get("experiment") if isinstance(tracking, Mapping) else None
    return name if isinstance(name, str) and name else DEFAULT_EXPERIMENT


def experiments_of(events: Sequence[Event]) -> dict[str, int]:
    """Each experiment the job's runs projected it into, with how many of the log's events
    it had when the job's last run there ended: up to the next run's RunStarted, or the
    whole log. In the order the runs first named them; {} for a log with no run."""
    starts = [i for i, e in enumerate(events) if isinstance(e, RunStarted)]
    seen: dict[str, int] = {}
    for i, start in enumerate(starts):
        event = events[start]
        assert isinstance(event, RunStarted)
        seen[experiment_named(event.config)] = starts[i + 1] if i + 1 < len(starts) else len(events)
    return seen


def _open(uri: str) -> None:
    global _uri
    _uri = uri
    _projections.clear()


def _projection(experiment: str) -> MlflowProjection:
    """The process's projection into one experiment: made, with the experiment, on first use
    (MlflowProjection makes a new SQLite store and its experiments one process at a time)."""
    if experiment not in _projections:
        _projections[experiment] = MlflowProjection(_uri, experiment, background=False)
    return _projections[experiment]


def _project(path: Path, blobs: Path, experiment: str | None) -> tuple[str, tuple[str, ...]]:
    """Project one log into its experiments (into `experiment`, whole, where one is given);
    returns the job's id and the experiments it went into."""
    events = read_events(path)
    parts = experiments_of(events)
    if experiment is not None and parts:
        parts = {experiment: len(events)}
    store = BlobStore(blobs)
    for name, seen in parts.items():
        _projection(name).project(events[:seen], store)
    return path.parent.name, tuple(parts)


def rebuild(logs: list[Path], blobs: Path, uri: str, experiment: str | None = None,
            workers: int = 0) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Project each log into the store, into the experiments its runs named (every one into
    `experiment` where given); yields each job's id and those experiments as it is done."""
    if workers <= 0:
        large = sum(p.stat().st_size for p in logs) >= PARALLEL_FROM_BYTES
        workers = min(os.cpu_count() or 1, len(logs)) if large else 1
    _open(uri)
    if workers == 1:
        for path in logs:
            yield _project(path, blobs, experiment)
        return
    # the store is made by the first worker to open it, the others wait (kgb.tracking.store_making)
    # spawned, not forked: a forked child would share the parent's database connections
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_open, initargs=(uri,)) as pool:
        for done in as_completed([pool.submit(_project, path, blobs, experiment) for path in logs]):
            yield done.result()
