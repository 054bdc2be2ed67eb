"""Reading the trials tables of a tracking store: one table per job run.

A SQLite store is read with Python's sqlite3 module, read-only: importing MLflow alone
takes seconds on a small machine, more than a whole query should. Other stores (a
tracking server) are read through MLflow's client. Both give the same rows.

A store may hold several campaigns, one MLflow experiment each (`tracking.experiment`):
a Store reads the experiments it is given by name, or every active one where it is given
none, and each job run says which experiment it came from, so that a query that read
several can say so (until session 50 every query read them all, silently: two campaigns
kept in one store were one leaderboard).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from kgb.query.scope import JobFacts, job_facts
from kgb.tracking.artifacts import local_dir
from kgb.tracking.mlflow_store import (
    SERVER_PROBE_S,
    file_store_refusal,
    server_silence,
    sqlite_path,
)
from kgb.tracking.summary import TABLE_NAME, TableError, TrialRow, job_info, parse

REBUILD = "python -m kgb.tracking rebuild OUTPUTS_DIR --tracking-uri URI"
RUN_STARTED = "run_started.json"  # the job run's first RunStarted (kgb.tracking.mlflow_projection)
T = TypeVar("T")


class StoreError(Exception):
    """A store that cannot be queried; the message says why and what to do, in one line."""


@dataclass(frozen=True)
class JobRun:
    run_id: str
    artifact_uri: str
    job: str = ""  # the job id (tag kgb.job), as its trials table's rows name it
    # MLflow's status, from the job's latest run: FINISHED, KILLED where Ctrl-C ended it,
    # RUNNING while it runs or where it logged no end
    status: str = "FINISHED"
    provider: str = ""  # its model.provider param: "replay" answered from logged completions
    start_ms: int = 0  # MLflow's start_time: that of the run it was first projected from
    # MLflow's end_time: when its latest run ended (that of an earlier run while a later one runs)
    end_ms: int | None = None
    experiment: str = ""  # the name of the MLflow experiment (the campaign) it is in


class Store:
    """The job runs of a tracking store, in the experiments named (every active one where
    none is), and the files of its runs."""

    def __init__(self, uri: str, experiments: Sequence[str] = ()):
        self.uri = uri
        self.path = sqlite_path(uri)
        self.named = tuple(dict.fromkeys(experiments))  # those asked for, once each; (): every one
        self._client: Any = None
        self._chosen: dict[str, str] | None = None
        if refusal := file_store_refusal(uri, "--tracking-uri "):
            raise StoreError(refusal)
        if self.path is not None and not self.path.is_file():
            raise StoreError(
                f"no MLflow store at {self.path.resolve()} (looked there for {uri}; nothing was created): "
                "run the query in the folder where `python run.py` ran, or point at the store a job wrote, "
                "--tracking-uri sqlite:///<tracking.root>/mlflow.db (by default outputs/mlflow.db beside the "
                "event logs) or a tracking server's http:// URI")
        if self.path is not None and (refusal := self._half_made()):
            raise StoreError(refusal)

    def _half_made(self) -> str | None:
        """What a store whose making was cut short is (by a kgb before session 47, or `mlflow ui`),
        and what makes it anew: read as it is, it has no runs, or tables MLflow cannot read
        ("no such table: runs"). A job or a rebuild sets it aside (kgb.tracking.store_making);
        the queries only read. A whole store is told by its first experiment: no MLflow import."""
        from kgb.tracking.store_making import half_made

        assert self.path is not None
        why = half_made(self.path)
        return None if why is None else (
            f"{self.path} was left half-made ({why}), its making cut short: run a job into its tracking.root, "
            f"or `{REBUILD}`, and kgb sets it aside and makes it anew")

    def _sql(self, query: str, args: tuple = ()) -> list[tuple]:
        assert self.path is not None
        try:
            return self._read(query, args, "mode=ro")
        except sqlite3.OperationalError as e:
            if os.access(self.path.parent, os.W_OK):
                raise StoreError(f"{self.path} is not an MLflow store ({e})") from e
        # A store in WAL mode (MLflow's) is opened, even to be read, by making its -shm file
        # beside it: in a folder this user cannot write (a result copied out read-only, a
        # read-only mount) "unable to open database file" until session 44. Read as a file
        # nobody writes meanwhile.
        try:
            return self._read(query, args, "immutable=1")
        except sqlite3.OperationalError as e:
            raise StoreError(f"{self.path} is not an MLflow store ({e})") from e

    def _read(self, query: str, args: tuple, mode: str) -> list[tuple]:
        assert self.path is not None
        with contextlib.closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=60)) as conn:
            return conn.execute(query, args).fetchall()

    def client(self) -> Any:
        if self._client is None:
            # a server that does not answer kept MLflow's client retrying, silent, for some four minutes
            if urlparse(self.uri).scheme in ("http", "https") and (reason := server_silence(self.uri)):
                raise StoreError(f"no tracking server answers at {self.uri} within {SERVER_PROBE_S:g} s ({reason}): "
                                 "check that `mlflow server` runs there and that --tracking-uri names its host and port")
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.uri)
        return self._client

    def experiments(self) -> dict[str, str]:
        """The store's active experiments: id -> name."""
        if self.path is not None:
            found = self._sql("SELECT experiment_id, name FROM experiments WHERE lifecycle_stage = 'active'")
            return {str(i): name for i, name in found}
        return active_experiments(self.client())

    def chosen(self) -> dict[str, str]:
        """The experiments the store is read in, id -> name: those named, else every active
        one. A name the store has no experiment of is a StoreError naming those it has, so that
        a misspelt campaign does not read as one without results."""
        if self._chosen is None:
            self._chosen = choose(self.uri, self.experiments(), self.named, self._jobs_per_experiment)
        return self._chosen

    def _jobs_per_experiment(self) -> dict[str, int]:
        """How many live job runs each experiment holds, by name (what an unknown name's error lists)."""
        if self.path is not None:
            query = ("SELECT e.name, COUNT(*) FROM runs r"
                     " JOIN experiments e ON e.experiment_id = r.experiment_id AND e.lifecycle_stage = 'active'"
                     " JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = 'kgb.kind' AND k.value = 'job'"
                     " WHERE r.lifecycle_stage = 'active' GROUP BY e.name")
            return dict(self._sql(query))
        from kgb.tracking.mlflow_store import search_all

        names = self.experiments()
        counts: dict[str, int] = {}
        for r in search_all(self.client(), list(names), "tags.`kgb.kind` = 'job'") if names else []:
            counts[names[r.info.experiment_id]] = counts.get(names[r.info.experiment_id], 0) + 1
        return counts

    def _in_chosen(self) -> tuple[str, tuple[str, ...]]:
        """The SQL condition (and its arguments) that keeps the runs of the experiments named;
        none where every experiment is read (the experiments join keeps the active ones)."""
        if not self.named:
            return "", ()
        ids = tuple(self.chosen())
        return f" AND r.experiment_id IN ({','.join('?' * len(ids))})", ids

    def job_runs(self, chip: str | None = None) -> list[JobRun]:
        """Every live job run, optionally only those of one chip."""
        if self.path is not None:
            where, ids = self._in_chosen()
            query = (
                "SELECT r.run_uuid, r.artifact_uri, COALESCE(j.value, ''), r.status, COALESCE(p.value, ''),"
                " COALESCE(r.start_time, 0), r.end_time, e.name FROM runs r"
                " JOIN experiments e ON e.experiment_id = r.experiment_id AND e.lifecycle_stage = 'active'"
                " JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = 'kgb.kind' AND k.value = 'job'"
                + (" JOIN tags c ON c.run_uuid = r.run_uuid AND c.key = 'kgb.chip' AND c.value = ?" if chip else "")
                + " LEFT JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'kgb.job'"
                " LEFT JOIN params p ON p.run_uuid = r.run_uuid AND p.key = 'model.provider'"
                " WHERE r.lifecycle_stage = 'active'" + where + " ORDER BY r.start_time, r.run_uuid"
            )
            return [JobRun(*row) for row in self._sql(query, ((chip,) if chip else ()) + ids)]
        from kgb.tracking.mlflow_store import search_all

        client = self.client()
        experiments = self.chosen()
        query = "tags.`kgb.kind` = 'job'" + (f" and tags.`kgb.chip` = '{chip}'" if chip else "")
        runs = search_all(client, list(experiments), query) if experiments else []
        return [JobRun(r.info.run_id, r.info.artifact_uri, r.data.tags.get("kgb.job", ""), r.info.status,
                       r.data.params.get("model.provider", ""), r.info.start_time or 0, r.info.end_time,
                       experiments[r.info.experiment_id])
                for r in sorted(runs, key=lambda r: (r.info.start_time, r.info.run_id))]

    def job_params(self, method: str, keys: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """The params `keys` (where logged) of every live job run of one method, by job id."""
        if self.path is not None:
            marks = ",".join("?" * len(keys))
            where, ids = self._in_chosen()
            query = (
                "SELECT j.value, p.key, p.value FROM runs r"
                " JOIN experiments e ON e.experiment_id = r.experiment_id AND e.lifecycle_stage = 'active'"
                " JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = 'kgb.kind' AND k.value = 'job'"
                " JOIN tags m ON m.run_uuid = r.run_uuid AND m.key = 'kgb.method' AND m.value = ?"
                " JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'kgb.job'"
                f" JOIN params p ON p.run_uuid = r.run_uuid AND p.key IN ({marks})"
                " WHERE r.lifecycle_stage = 'active'" + where
            )
            found: dict[str, dict[str, str]] = {}
            for job, key, value in self._sql(query, (method, *keys, *ids)):
                found.setdefault(job, {})[key] = value
            return found
        from kgb.tracking.mlflow_store import search_all

        client = self.client()
        experiments = list(self.chosen())
        query = f"tags.`kgb.kind` = 'job' and tags.`kgb.method` = '{method}'"
        runs = search_all(client, experiments, query) if experiments else []
        return {r.data.tags["kgb.job"]: {k: v for k, v in r.data.params.items() if k in keys} for r in runs}

    def artifact_uri(self, run_id: str) -> str:
        if self.path is not None:
            found = self._sql("SELECT artifact_uri FROM runs WHERE run_uuid = ?", (run_id,))
            if not found:
                raise StoreError(f"run {run_id} is not in {self.uri}")
            return found[0][0]
        return self.client().get_run(run_id).info.artifact_uri

    def read_text(self, run_id: str, artifact_uri: str, name: str) -> str | None:
        """A run's artifact as text; None where the run has no such file."""
        folder = local_dir(artifact_uri)
        if folder is not None:
            path = folder / name
            return path.read_text() if path.is_file() else None
        with tempfile.TemporaryDirectory(prefix="kgb-query-") as tmp:
            try:
                return Path(self.client().download_artifacts(run_id, name, tmp)).read_text()
            except Exception:  # noqa: BLE001 - MLflow raises several types for a missing file
                return None

    def copy(self, run_id: str, name: str, dest: Path) -> Path:
        """Copy one artifact of a run to dest/name."""
        text = self.read_text(run_id, self.artifact_uri(run_id), name)
        if text is None:
            raise StoreError(f"run {run_id} has no {name}")
        dest.mkdir(parents=True, exist_ok=True)
        target = dest / Path(name).name
        # written beside it, then renamed over it; opened as any new file (0666 less the umask:
        # a NamedTemporaryFile's 0600 made kernel.py unlike the verdict.json written next to it)
        part = dest / f".{target.name}.{uuid.uuid4().hex}.part"
        with open(part, "x") as f:
            f.write(text)
        os.replace(part, target)
        return target


def active_experiments(client: Any) -> dict[str, str]:
    """Every active experiment of the store behind an MLflow client, all pages: id -> name."""
    found: dict[str, str] = {}
    token = None
    while True:
        page = client.search_experiments(max_results=1000, page_token=token)
        found.update((e.experiment_id, e.name) for e in page)
        token = page.token
        if not token:
            return found


def choose(uri: str, found: Mapping[str, str], named: Sequence[str],
           jobs: Callable[[], Mapping[str, int]] | None = None) -> dict[str, str]:
    """Of the store's experiments `found` (id -> name), those `named`, or all where none is.
    StoreError where a name is none of theirs, listing them, with their job runs where `jobs`
    counts them (by name): those holding kgb jobs first."""
    if missing := [n for n in named if n not in found.values()]:
        counts = jobs() if jobs is not None else None
        if counts is None:
            have = ", ".join(sorted(found.values()))
        else:
            have = ", ".join(f"{name} ({counts[name]} job{'s' * (counts[name] != 1)})" if counts.get(name)
                             else f"{name} (no kgb job)"
                             for name in sorted(found.values(), key=lambda n: (not counts.get(n), n)))
        raise StoreError(f"no experiment {', '.join(map(repr, missing))} in {uri}; its experiments: {have or 'none'}")
    return {i: name for i, name in found.items() if not named or name in named}


def trial_rows(uri: str, chip: str | None = None, experiments: Sequence[str] = ()) -> list[TrialRow]:
    """Every finished trial in the store (of one chip, if given; of the experiments named,
    where any is), from the jobs' tables."""
    return read(uri, experiments, chip=chip, facts=False).trials


@dataclass(frozen=True)
class Contents:
    """The store's finished trials and what the queries must know of each job beyond them
    (kgb.query.scope: how it ended, what it set out to judge, whether it paid for its calls)."""

    trials: list[TrialRow]
    jobs: dict[str, JobFacts]  # by job id, those with no trial yet included; {} where not read (facts=False)
    experiments: tuple[str, ...] = ()  # the names of the experiments its job runs came from, sorted


def read(uri: str, experiments: Sequence[str] = (), *, chip: str | None = None, facts: bool = True) -> Contents:
    """The trials of the job runs in the experiments named (every active one where none is),
    of one chip where given, and, with `facts`, what scope needs of each job: one file more a job."""
    store = Store(uri, experiments)
    trials: list[TrialRow] = []
    jobs: dict[str, JobFacts] = {}
    runs = store.job_runs(chip)
    for job in runs:
        text = _table_text(store, job)
        trials += _parsed(job, text, parse)
        if not facts:
            continue
        try:
            jobs[job.job] = job_facts(job.status, job.provider,
                                      lambda job=job: store.read_text(job.run_id, job.artifact_uri, RUN_STARTED),
                                      _parsed(job, text, job_info), job.start_ms, job.end_ms)
        except ValueError as e:
            raise StoreError(f"job run {job.run_id}: unreadable {RUN_STARTED} ({e})") from e
    return Contents(trials, jobs, tuple(sorted({job.experiment for job in runs})))


def _table_text(store: Store, job: JobRun) -> str:
    text = store.read_text(job.run_id, job.artifact_uri, TABLE_NAME)
    if text is None:
        raise StoreError(f"job run {job.run_id} has no {TABLE_NAME} (projected by an older kgb): {REBUILD}")
    return text


def _parsed(job: JobRun, text: str, reader: Callable[[str], T]) -> T:
    """What `reader` reads of the job run's trials table; StoreError where it cannot."""
    try:
        return reader(text)
    except (TableError, ValueError, KeyError) as e:
        raise StoreError(f"job run {job.run_id}: unreadable {TABLE_NAME} ({e})") from e
