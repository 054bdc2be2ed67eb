"""A throwaway shared store: a real PostgreSQL cluster and a real `mlflow server` on it.

What a team runs once for many hosts (docs/many-hosts.md), brought up in a temporary
directory on random ports so that a test can point several kgb processes at one tracking
server. PostgreSQL comes from Debian's `postgresql` package (its binaries live under
/usr/lib/postgresql/<version>/bin, off PATH); the server refuses to run as root, so as root
the cluster is made and started as `nobody`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534  # uid and gid of Debian's nobody/nogroup
START_TIMEOUT_S = 180.0  # mlflow server imports a lot: slow on a loaded two-core machine


def postgres_bin() -> Path | None:
    """The directory of initdb and pg_ctl, or None where PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return versions[-1].parent if versions else None


def missing() -> str | None:
    """Why the shared store cannot be brought up here, or None where it can."""
    if postgres_bin() is None:
        return "Debian's postgresql is not installed (apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401 - SQLAlchemy's PostgreSQL driver, used by mlflow server
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class SharedStore:
    uri: str  # http://127.0.0.1:PORT: what kgb jobs get as tracking.uri
    database: str  # postgresql://...: the backend the server writes
    artifacts: Path  # the shared artifact root (NFS on a real cluster)
    log: Path  # the server's output, for a failing test to show


def _as_postgres_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]


@contextmanager
def shared_store() -> Iterator[SharedStore]:
    """Start PostgreSQL and `mlflow server`; stop both (and remove their files) on exit."""
    bindir = postgres_bin()
    assert bindir is not None, missing()
    top = Path(tempfile.mkdtemp(prefix="kgb-store-"))
    if os.geteuid() == 0:
        os.chown(top, NOBODY, NOBODY)
    data, pg_port, http_port = top / "pgdata", free_port(), free_port()
    subprocess.run(_as_postgres_user([str(bindir / "initdb"), "-D", str(data), "-U", "kgb", "--auth=trust",
                                      "-E", "UTF8", "--no-sync", "--no-instructions"]),
                   check=True, capture_output=True, timeout=120)
    options = f"-p {pg_port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(_as_postgres_user([str(bindir / "pg_ctl"), "-D", str(data), "-o", options,
                                      "-l", str(top / "postgres.log"), "-w", "-t", "120", "start"]),
                   check=True, capture_output=True, timeout=150)
    server = None
    try:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={pg_port} user=kgb dbname=postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE mlflow")
        database = f"postgresql://kgb@127.0.0.1:{pg_port}/mlflow"
        artifacts = top / "artifacts"
        artifacts.mkdir()
        log = top / "mlflow.log"
        # --no-serve-artifacts: runs record file:// artifact URIs under the shared root and
        # each host writes there itself (an NFS mount), as docs/many-hosts.md sets it up
        server = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", database,
             "--default-artifact-root", artifacts.as_uri(), "--no-serve-artifacts",
             "--host", "127.0.0.1", "--port", str(http_port), "--workers", "1"],
            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        store = SharedStore(f"http://127.0.0.1:{http_port}", database, artifacts, log)
        _wait_healthy(store, server)
        yield store
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        subprocess.run(_as_postgres_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(top, ignore_errors=True)


def _wait_healthy(store: SharedStore, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"mlflow server exited {server.returncode}:\n{store.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{store.uri}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"mlflow server did not answer within {START_TIMEOUT_S:.0f}s:\n{store.log.read_text()[-3000:]}")
