"""Creating finished runs in an MLflow tracking store, many at a time.

MLflow's client spends about six database transactions on one run (create, log, tag,
terminate), each a commit: tens of milliseconds per run on a small machine. For SQL
stores (SQLite, PostgreSQL, MySQL) `SqlRunWriter` inserts whole runs — the run, its
tags, metrics and params — through MLflow's own table definitions, all the runs of one
projection in one transaction, so a run appears complete or not at all. A SQLite store
is switched to write-ahead logging with normal sync: the store is a read model rebuilt
from the event logs, so a commit need not wait for the disk. Other stores (an
`http://` tracking server) get `ClientRunWriter`, MLflow's public client per run.
"""

from __future__ import annotations

import getpass
import math
import os
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from kgb.tracking.artifacts import ArtifactWriter, File

SQL_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
COMPLETE = "kgb.complete"  # set on a run once all its data is there
PARENT = "mlflow.parentRunId"  # the tag that hangs a run under another in MLflow's UI
# How long to wait for a tracking server's answer: MLflow's client retries for some four minutes
SERVER_PROBE_S = 5.0


@dataclass
class NewRun:
    """A finished run to create, with everything it holds."""

    name: str
    start_ms: int
    end_ms: int
    tags: dict[str, str]
    metrics: dict[str, float]
    files: dict[str, File] = field(default_factory=dict)  # artifact path -> text, or the blob holding it
    params: dict[str, str] = field(default_factory=dict)
    history: list[tuple[str, float, int]] = field(default_factory=list)  # (metric, value, step): a trajectory
    run_id: str = ""  # set once created


@dataclass(frozen=True)
class KnownRun:
    run_id: str
    complete: bool
    parent: str | None = None  # the run it hangs under (PARENT)


class RunWriter(Protocol):
    def create(self, experiment_id: str, runs: list[NewRun]) -> None:
        """Create the runs, FINISHED, each with its artifacts; sets their run_id."""
        ...

    def trial_runs(self, experiment_id: str, job: str) -> dict[str, list[KnownRun]]:
        """The live trial runs of a job, by trial key."""
        ...

    def reparent(self, run_ids: list[str], parent: str) -> None:
        """Hang the runs under `parent` (their PARENT tag), all of them or, where the store
        allows, none."""
        ...


def sqlite_path(uri: str) -> Path | None:
    """The file of a SQLite store's URI (sqlite:///PATH); None for another store."""
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def file_store_refusal(uri: str, setting: str) -> str | None:
    """One line where `uri` names an MLflow file store (a plain path, or file://...), which the
    pinned MLflow refuses to open ("in maintenance mode") unless MLFLOW_ALLOW_FILE_STORE is
    true, so that it is refused before a job judges anything or a query prints MLflow's
    traceback; None for any other URI. `setting` is how the caller's user gave it
    ("tracking.uri=", "--tracking-uri ")."""
    parsed = urlparse(uri)
    if not uri or parsed.scheme not in ("", "file") or os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in ("true", "1"):
        return None
    path = urllib.request.url2pathname(parsed.path) if parsed.scheme else uri
    if not path.endswith((".db", ".sqlite", ".sqlite3")):
        path = os.path.join(path, "mlflow.db")
    return (f"{setting}{uri}: a plain path or file:// URI names an MLflow file store, which this MLflow no longer "
            f"opens; give sqlite:///PATH.db (here {setting}sqlite:///{path}) or http(s)://HOST:PORT of an `mlflow server`")


def server_silence(uri: str, timeout_s: float = SERVER_PROBE_S) -> str | None:
    """Why no tracking server answers at an http(s):// URI within timeout_s; None where one
    answers. Any HTTP answer counts: MLflow's client says what is wrong with it."""
    try:
        urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout_s).close()
    except urllib.error.HTTPError:
        return None
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return None


def writer_for(uri: str, client: Any) -> RunWriter:
    scheme = uri.split(":", 1)[0].split("+", 1)[0]
    return SqlRunWriter(uri, client) if scheme in SQL_SCHEMES else ClientRunWriter(client)


def _metric_value(value: float) -> tuple[float, bool]:
    return (0.0, True) if math.isnan(value) else (value, False)


class SqlRunWriter:
    """Bulk inserts through MLflow's SQLAlchemy tables (schema created by MLflow itself)."""

    def __init__(self, uri: str, client: Any):
        import sqlalchemy
        from mlflow.store.tracking.dbmodels import models

        self.client = client
        self.models = models
        self.artifacts = ArtifactWriter(client)
        self.user = _user()
        self._locations: dict[str, str] = {}
        is_sqlite = uri.startswith("sqlite")
        self.engine = sqlalchemy.create_engine(uri, connect_args={"timeout": 60} if is_sqlite else {})
        if is_sqlite:
            @sqlalchemy.event.listens_for(self.engine, "connect")
            def _fast_commits(conn: Any, _record: Any) -> None:
                # switching modes takes a lock that waits for no busy timeout: another
                # process writing the store would fail this connection, so only once
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")

            with self.engine.connect():  # now: a rebuild's workers find the store in WAL mode
                pass

    def _location(self, experiment_id: str) -> str:
        if experiment_id not in self._locations:
            self._locations[experiment_id] = self.client.get_experiment(experiment_id).artifact_location
        return self._locations[experiment_id]

    def create(self, experiment_id: str, runs: list[NewRun]) -> None:
        if not runs:
            return
        m = self.models
        location = self._location(experiment_id).rstrip("/")
        run_rows, tag_rows, metric_rows, latest_rows, param_rows = [], [], [], [], []
        for run in runs:
            run.run_id = uuid.uuid4().hex
            artifact_uri = f"{location}/{run.run_id}/artifacts"
            self.artifacts.write(run.run_id, artifact_uri, run.files)  # files first: a run never lacks them
            run_rows.append({
                "run_uuid": run.run_id, "name": run.name, "source_type": "UNKNOWN", "source_name": "",
                "entry_point_name": "", "user_id": self.user, "status": "FINISHED",
                "start_time": run.start_ms, "end_time": run.end_ms, "deleted_time": None,
                "source_version": "", "lifecycle_stage": "active", "artifact_uri": artifact_uri,
                "experiment_id": int(experiment_id),
            })
            tags = {"mlflow.runName": run.name, "mlflow.user": self.user, **run.tags, COMPLETE: "1"}
            tag_rows += [{"key": k, "value": v, "run_uuid": run.run_id} for k, v in tags.items()]
            latest: dict[str, dict] = {}
            for k, v, step in [(k, v, 0) for k, v in run.metrics.items()] + list(run.history):
                value, is_nan = _metric_value(float(v))
                row = {"key": k, "value": value, "timestamp": run.end_ms, "step": step, "is_nan": is_nan,
                       "run_uuid": run.run_id}
                metric_rows.append(row)
                if k not in latest or step >= latest[k]["step"]:
                    latest[k] = row
            latest_rows += list(latest.values())
            param_rows += [{"key": k, "value": v, "run_uuid": run.run_id} for k, v in run.params.items()]
        with self.engine.begin() as conn:  # one transaction: every run whole, or none
            _insert(conn, m.SqlRun.__table__, run_rows)
            _insert(conn, m.SqlTag.__table__, tag_rows)
            _insert(conn, m.SqlMetric.__table__, metric_rows)
            _insert(conn, m.SqlLatestMetric.__table__, latest_rows)
            _insert(conn, m.SqlParam.__table__, param_rows)

    def trial_runs(self, experiment_id: str, job: str) -> dict[str, list[KnownRun]]:
        import sqlalchemy

        query = sqlalchemy.text(
            "SELECT r.run_uuid, k.value, c.value, p.value FROM runs r"
            " JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'kgb.job' AND j.value = :job"
            " JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = 'kgb.trial'"
            " LEFT JOIN tags c ON c.run_uuid = r.run_uuid AND c.key = :complete"
            " LEFT JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = :parent"
            " WHERE r.experiment_id = :experiment AND r.lifecycle_stage = 'active'"
        )
        found: dict[str, list[KnownRun]] = {}
        with self.engine.connect() as conn:
            rows = conn.execute(query, {"job": job, "complete": COMPLETE, "parent": PARENT, "experiment": int(experiment_id)})
            for run_id, key, complete, parent in rows:
                found.setdefault(key, []).append(KnownRun(run_id, complete == "1", parent))
        return found

    def reparent(self, run_ids: list[str], parent: str) -> None:
        if not run_ids:
            return
        table = self.models.SqlTag.__table__
        with self.engine.begin() as conn:  # one transaction: a job's trials all move, or none
            # deleted and inserted, not updated: a run without the tag gets it too; in chunks, as
            # SQLite bounds the values one statement takes (999 before its 3.32)
            for i in range(0, len(run_ids), 500):
                conn.execute(table.delete().where(table.c.key == PARENT, table.c.run_uuid.in_(run_ids[i : i + 500])))
            _insert(conn, table, [{"key": PARENT, "value": parent, "run_uuid": run_id} for run_id in run_ids])


PLACEHOLDERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}  # DB-API paramstyles taking positions


def _insert(conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows (all with the same keys) in one executemany. Plain SQL with the driver's
    own placeholders where it takes positional ones: SQLAlchemy's per-row parameter
    processing would cost more than the database's insert does."""
    if not rows:
        return
    mark = PLACEHOLDERS.get(conn.dialect.paramstyle)
    if mark is None:
        conn.execute(table.insert(), rows)
        return
    columns = list(rows[0])
    quote = conn.dialect.identifier_preparer
    sql = (f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c) for c in columns)})"
           f" VALUES ({', '.join([mark] * len(columns))})")
    conn.exec_driver_sql(sql, [tuple(row[c] for c in columns) for row in rows])


class ClientRunWriter:
    """MLflow's public client, one run at a time, for stores that are not SQL databases."""

    def __init__(self, client: Any):
        self.client = client
        self.artifacts = ArtifactWriter(client)

    def create(self, experiment_id: str, runs: list[NewRun]) -> None:
        from mlflow.entities import Metric, Param, RunTag

        for run in runs:
            created = self.client.create_run(experiment_id, run_name=run.name, start_time=run.start_ms,
                                             tags={**run.tags, COMPLETE: "0"})
            run.run_id = created.info.run_id
            self.artifacts.write(run.run_id, created.info.artifact_uri, run.files)
            self.client.log_batch(
                run.run_id,
                metrics=[Metric(k, float(v), run.end_ms, 0) for k, v in run.metrics.items()]
                + [Metric(k, float(v), run.end_ms, step) for k, v, step in run.history],
                params=[Param(k, v) for k, v in run.params.items()],
                tags=[RunTag(COMPLETE, "1")],  # with the metrics, in one request
            )
            self.client.set_terminated(run.run_id, "FINISHED", end_time=run.end_ms)

    def trial_runs(self, experiment_id: str, job: str) -> dict[str, list[KnownRun]]:
        found: dict[str, list[KnownRun]] = {}
        for r in search_all(self.client, [experiment_id], f"tags.`kgb.job` = '{job}' and tags.`kgb.kind` = 'trial'"):
            found.setdefault(r.data.tags["kgb.trial"], []).append(
                KnownRun(r.info.run_id, r.data.tags.get(COMPLETE) == "1", r.data.tags.get(PARENT)))
        return found

    def reparent(self, run_ids: list[str], parent: str) -> None:
        for run_id in run_ids:  # a server takes one tag per request; one left over moves with the next run
            self.client.set_tag(run_id, PARENT, parent)


def search_all(client: Any, experiment_ids: list[str], query: str) -> list[Any]:
    """Every run matching `query`, all pages."""
    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs(experiment_ids, filter_string=query, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def now_ms() -> int:
    return int(time.time() * 1000)
