"""A throwaway single-node SLURM cluster: munged, slurmctld, slurmd and slurmdbd on this machine.

What a site runs on many hosts (docs/many-hosts.md), brought up in a temporary directory
on random ports so that a test can submit a real sweep through sbatch: one node, this
machine, in two partitions that stand for two chips. Debian's `slurmctld`, `slurmd`,
`slurmdbd`, `slurm-client` and `munge` provide the daemons and commands. Without systemd or a writable cgroup tree (containers), processes are
tracked through /proc (proctrack/linuxproc) and tasks are not confined (task/none).

Accounting: `sacct` reads only slurmdbd, which stores into MySQL/MariaDB (Debian's SLURM
has no file-based accounting storage), so the cluster comes with a throwaway MariaDB
server (Debian's `mariadb-server`, made by mariadb-install-db in the temporary directory)
and a slurmdbd on it: `sacct` then says where each job ran, requeues included.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from store_server import free_port

DAEMONS = ("munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd")  # in the order they start
TOOLS = ("mariadb-install-db", "sacctmgr", "sbatch", "scontrol", "scancel", "sacct")
PACKAGES = "slurmctld slurmd slurmdbd slurm-client munge mariadb-server"  # Debian's, as .ci/run installs them
NODE = "kgbnode"
START_TIMEOUT_S = 60.0


def missing() -> str | None:
    """Why a SLURM cluster cannot be brought up here, or None where it can."""
    absent = [d for d in (*DAEMONS, *TOOLS) if shutil.which(d, path=f"{os.environ['PATH']}:/usr/sbin") is None]
    if absent:
        return f"{', '.join(absent)} not installed (apt-get install {PACKAGES})"
    if os.geteuid() != 0:
        return "slurmd runs jobs as their submitter only as root: the tests do not run as root"
    return None


@dataclass(frozen=True)
class Cluster:
    conf: Path  # slurm.conf: what SLURM_CONF names for every client command
    logs: Path  # the daemons' logs, for a failing test to show

    @property
    def env(self) -> dict[str, str]:
        """The environment in which sbatch, scontrol and squeue talk to this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str) -> str:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
        return done.stdout

    def accounting(self, *jobs: str) -> list[dict[str, str]]:
        """sacct's record of each run of the jobs (requeued runs included), e.g.
        {"JobID": "3", "Partition": "E", "NodeList": "kgbnode", "State": "COMPLETED", "GPUs": "1"}."""
        fields = ("JobID", "Partition", "NodeList", "State", "AllocTRES")
        out = self.run("sacct", "--duplicates", "--allocations", "--noheader", "--parsable2",
                       f"--format={','.join(fields)}", f"--jobs={','.join(jobs)}")
        runs = []
        for line in out.splitlines():
            run = dict(zip(fields, line.split("|"), strict=True))
            tres = dict(t.split("=", 1) for t in run.pop("AllocTRES").split(",") if "=" in t)
            runs.append({**run, "GPUs": tres.get("gres/gpu", "0")})
        return runs

    def tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log")))


def _sbin(name: str) -> str:
    found = shutil.which(name, path=f"{os.environ['PATH']}:/usr/sbin")
    assert found is not None, missing()
    return found


def _node_line() -> str:
    """This machine as slurmd sees it (`slurmd -C`), under the cluster's node name."""
    found = subprocess.run([_sbin("slurmd"), "-C"], capture_output=True, text=True, check=True, timeout=60).stdout
    hardware = dict(re.findall(r"(\w+)=(\S+)", found.splitlines()[0]))
    keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    return f"NodeName={NODE} NodeAddr=127.0.0.1 {' '.join(f'{k}={hardware[k]}' for k in keep)} Gres=gpu:1 State=UNKNOWN"


def _write_conf(top: Path, partitions: tuple[str, ...], dbd_port: int) -> Path:
    conf = top / "slurm.conf"
    lines = [
        "ClusterName=kgb-test",
        "SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={free_port()}",
        f"SlurmdPort={free_port()}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        # cred_expire is also how long a requeued job waits before it may start again (120 s
        # by default): short, so that the test's requeued job starts within seconds
        f"AuthInfo=socket={top / 'munge' / 'munge.socket'},cred_expire=5",
        f"StateSaveLocation={top / 'state'}",
        f"SlurmdSpoolDir={top / 'spool'}",
        f"SlurmctldPidFile={top / 'slurmctld.pid'}",
        f"SlurmdPidFile={top / 'slurmd.pid'}",
        f"SlurmctldLogFile={top / 'logs' / 'slurmctld.log'}",
        f"SlurmdLogFile={top / 'logs' / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        # no systemd, no cgroup tree of its own in a container: /proc and no confinement
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=localhost",
        f"AccountingStoragePort={dbd_port}",
        # the MUNGE socket for talking to slurmdbd (AuthInfo's is not used for it)
        f"AccountingStoragePass={top / 'munge' / 'munge.socket'}",
        "ReturnToService=2",
        "MailProg=/bin/true",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=bf_interval=1,sched_interval=1",
        "GresTypes=gpu",
        "AccountingStorageTRES=gres/gpu",  # sacct's AllocTRES then shows the GPUs a job got
        # a test's jobs should not wait on timers meant for a busy cluster
        "KillWait=5",
        "MinJobAge=300",
        _node_line(),
        *(f"PartitionName={p} Nodes={NODE} MaxTime=INFINITE State=UP{' Default=YES' if i == 0 else ''}"
          for i, p in enumerate(partitions)),
    ]
    conf.write_text("\n".join(lines) + "\n")
    # the fake chip's GPU: a count only, no device file (the test's jobs never touch it)
    (top / "gres.conf").write_text(f"NodeName={NODE} Name=gpu Count=1 File=/dev/null\n")
    return conf


def _write_dbd_conf(top: Path, dbd_port: int, db_port: int) -> None:
    conf = top / "slurmdbd.conf"
    conf.write_text("\n".join([
        "AuthType=auth/munge",
        f"AuthInfo=socket={top / 'munge' / 'munge.socket'}",
        "DbdHost=localhost",
        f"DbdPort={dbd_port}",
        "SlurmUser=root",
        f"LogFile={top / 'logs' / 'slurmdbd.log'}",
        f"PidFile={top / 'slurmdbd.pid'}",
        "StorageType=accounting_storage/mysql",
        "StorageHost=127.0.0.1",
        f"StoragePort={db_port}",
        "StorageUser=root",  # mariadb-install-db's root@127.0.0.1, no password: nothing else listens
        "StorageLoc=slurm_acct_db",
    ]) + "\n")
    conf.chmod(0o600)  # slurmdbd refuses a configuration others can read (it may hold a password)


@contextmanager
def slurm_cluster(partitions: tuple[str, ...]) -> Iterator[Cluster]:
    """Start munged, MariaDB, slurmdbd, slurmctld and slurmd with one node in `partitions`;
    stop them (and remove their files) on exit. The first partition is the default."""
    top = Path(tempfile.mkdtemp(prefix="kgb-slurm-"))
    for sub in ("munge", "state", "spool", "logs"):
        (top / sub).mkdir()
    os.chmod(top / "munge", 0o700)
    key = top / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    dbd_port, db_port = free_port(), free_port()
    conf = _write_conf(top, partitions, dbd_port)
    _write_dbd_conf(top, dbd_port, db_port)
    cluster = Cluster(conf, top / "logs")
    daemons: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> None:
        daemons.append(subprocess.Popen(
            [_sbin(name), *args], env=cluster.env, stdout=subprocess.DEVNULL,
            stderr=(top / "logs" / f"{name}.err.log").open("w"), start_new_session=True))

    try:
        munge = top / "munge"
        start("munged", "--foreground", "--force", f"--socket={munge / 'munge.socket'}", f"--key-file={key}",
              f"--pid-file={munge / 'munged.pid'}", f"--seed-file={munge / 'seed'}",
              f"--log-file={top / 'logs' / 'munged.log'}")
        _wait(lambda: (munge / "munge.socket").exists(), "munged", cluster, daemons)
        subprocess.run([_sbin("mariadb-install-db"), "--no-defaults", f"--datadir={top / 'db'}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)
        start("mariadbd", "--no-defaults", f"--datadir={top / 'db'}", f"--socket={top / 'db.socket'}",
              "--bind-address=127.0.0.1", f"--port={db_port}", "--user=root",
              f"--log-error={top / 'logs' / 'mariadb.log'}", "--innodb-flush-log-at-trx-commit=0")
        _wait(lambda: _listening(db_port), "MariaDB", cluster, daemons)
        start("slurmdbd", "-D")  # finds slurmdbd.conf next to SLURM_CONF
        _wait(lambda: _listening(dbd_port), "slurmdbd", cluster, daemons)
        cluster.run("sacctmgr", "--immediate", "add", "cluster", "kgb-test")
        start("slurmctld", "-D", "-i", "-f", str(conf))
        start("slurmd", "-D", "-N", NODE, "-f", str(conf))
        _wait(lambda: _node_idle(cluster), "the node to be idle", cluster, daemons)
        yield cluster
    finally:
        _cancel_jobs(cluster, daemons)
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(timeout=30)
        shutil.rmtree(top, ignore_errors=True)


def _cancel_jobs(cluster: Cluster, daemons: list[subprocess.Popen]) -> None:
    """Cancel what a failed test left running: slurmd's job steps outlive slurmd."""
    if len(daemons) < len(DAEMONS) or any(d.poll() is not None for d in daemons):
        return  # the cluster never came up whole: no job can be running
    try:
        cluster.run("scancel", "--me")
        deadline = time.monotonic() + 30
        while cluster.run("squeue", "--me", "--noheader").strip() and time.monotonic() < deadline:
            time.sleep(0.5)
    except (RuntimeError, subprocess.TimeoutExpired):
        pass


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _node_idle(cluster: Cluster) -> bool:
    try:
        return cluster.run("sinfo", "--noheader", "--format=%T", f"--nodes={NODE}").split()[0] == "idle"
    except (RuntimeError, IndexError, subprocess.TimeoutExpired):
        return False


def _wait(ready: Callable[[], bool], what: str, cluster: Cluster, daemons: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        dead = [d for d in daemons if d.poll() is not None]
        if dead:
            raise RuntimeError(f"{dead[0].args[0]} exited {dead[0].returncode}:\n{cluster.tail()}")
        if ready():
            return
        time.sleep(0.25)
    raise RuntimeError(f"waited {START_TIMEOUT_S:.0f}s for {what}:\n{cluster.tail()}")
