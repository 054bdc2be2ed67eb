"""A new SQLite tracking store, made whole or not at all.

MLflow makes a new store's tables by running its schema migrations: some 1,700 SQL
statements over 1-2 s, in many transactions. A process that ended among them left a
half-made mlflow.db that MLflow no longer opened ("table _alembic_tmp_experiments already
exists", "duplicate column name", "out-of-date database schema"), so every later job's
projection and every query of the store failed until the user deleted the file. Ctrl-C
in a job's first seconds did it: the job makes its store in a background thread
(kgb.tracking.follower.Opening) and exits at once (run.py): found by session 47's user
walk, and 10 of 20 Ctrl-Cs sent in that window left such a store.

So the store is made under a temporary name beside it and renamed into place once MLflow
is done: its path holds a whole store, or none. A half-made store already at the path
(left by a kgb before session 47, or by `mlflow ui` cut short) is set aside, renamed and
never deleted, and made anew; the event logs are the source of truth, and the jobs'
next runs, or `python -m kgb.tracking rebuild`, project them into it. A store that holds
an experiment or a run is never set aside: MLflow says what to do with one it will not open.

The migrations are the same for every new store of one MLflow version, and cost a job (and
every test that makes a tracking root) over a second of a core. So MLflow makes one store
per version into the user's cache (`$XDG_CACHE_HOME/kgb/mlflow-stores/`, else
`~/.cache/...`), and a new store is a copy of it, renamed into place like any other. Where
the cache cannot be written, each store is migrated as before.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

MAKING = ".making-"  # .<store>.making-<pid>: a store being made, renamed into place once whole
ASIDE = ".half-made-"  # <store>.half-made-<time>: a half-made store set aside


def made_whole(store: Path) -> None:
    """Make the SQLite store at `store` where there is none, or a half-made one. The caller
    holds the store's lock (kgb.tracking.mlflow_projection._made_alone): no other kgb process
    makes it, or sets it aside, meanwhile."""
    for left in store.parent.glob(f".{store.name}{MAKING}*"):  # a making cut short: no one's store
        left.unlink(missing_ok=True)
    if store.exists() and store.stat().st_size:  # an empty file is what SQLite makes of a new store too
        why = half_made(store)
        if why is None:
            return
        aside = store.with_name(f"{store.name}{ASIDE}{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("-journal", "-wal", "-shm"):  # its unfinished transaction goes with it
            if (part := store.with_name(store.name + suffix)).exists():
                os.rename(part, aside.with_name(aside.name + suffix))
        os.rename(store, aside)
        print(f"kgb: the MLflow store {store} was half-made ({why}), its making cut short, and holds no run: "
              f"set aside as {aside} (delete it at will) and made anew; the event logs fill it", file=sys.stderr)
    _make(store)


def half_made(store: Path) -> str | None:
    """Why the store's making was cut short: MLflow's schema is not at its head revision and
    the store holds no experiment (MLflow adds its default one once the schema is whole) and
    no run. None for a whole store, one holding anything, or a file SQLite does not read
    (MLflow says what is wrong with it)."""
    try:
        db = sqlite3.connect(store, timeout=60)
    except sqlite3.Error:
        return None
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in ("experiments", "runs"):
            if table in tables and db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                return None
        found = db.execute("SELECT version_num FROM alembic_version").fetchall() if "alembic_version" in tables else []
    except sqlite3.Error:
        return None
    finally:
        db.close()
    from mlflow.store.db.utils import _get_latest_schema_revision

    head = _get_latest_schema_revision()
    version = found[0][0] if found else None
    return None if version == head else f"schema {version or 'without a version'}, not MLflow's {head}"


def _make(store: Path) -> None:
    """A copy of this MLflow version's pristine store, or MLflow's migrations run on an empty
    database, in a file of another name, then renamed to `store`."""
    making = store.with_name(f".{store.name}{MAKING}{os.getpid()}")
    template = _template()
    if template is None:
        _migrated(making)
    else:
        shutil.copyfile(template, making)
        with open(making, "rb+") as f:  # the copy reaches the disk before the rename does
            os.fsync(f.fileno())
    os.replace(making, store)


def _migrated(path: Path) -> None:
    """What MLflow does to an empty database on its first open, done to `path`. SQLite's
    commits reach the disk before this returns."""
    from mlflow.store.db.utils import _initialize_tables, _verify_schema, create_sqlalchemy_engine

    engine = create_sqlalchemy_engine(f"sqlite:///{path}")
    try:
        _initialize_tables(engine)
        _verify_schema(engine)  # whole: at MLflow's head revision
    finally:
        engine.dispose()  # no connection left on the file when it is copied or renamed


def _template() -> Path | None:
    """This MLflow version's pristine store in the user's cache, made there if it is not yet;
    None where the cache folder cannot be made or written. It holds MLflow's tables and no
    experiment: MLflow adds its default experiment, whose artifact folder names the store's
    own, when a store is first opened."""
    from mlflow.version import VERSION

    from kgb.evaluate.compile_cache import users_cache

    folder = users_cache("mlflow-stores")
    template = folder / f"mlflow-{VERSION}.db"
    if template.is_file():
        return template
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for left in folder.glob(f".{template.name}{MAKING}*"):  # a making cut short (Ctrl-C)
            if not _alive(left.name.rpartition(MAKING)[2]):
                left.unlink(missing_ok=True)
        making = folder / f".{template.name}{MAKING}{os.getpid()}"
        _migrated(making)
        os.replace(making, template)  # two processes making it at once: either's is whole
    except OSError:
        return None
    return template


def _alive(pid: str) -> bool:
    """Whether the process that names a making is still at it (then its file is its own)."""
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True
