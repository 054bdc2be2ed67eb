"""A throwaway single-node SLURM cluster: munged, slurmctld and slurmd on this machine.

What a site runs on many hosts (docs/many-hosts.md), brought up in a temporary directory
on random ports so that a test can submit a real sweep through sbatch: one node, this
machine, in two partitions that stand for two chips. Debian's `slurm-wlm` and `munge`
provide the daemons. Without systemd or a writable cgroup tree (containers), processes are
tracked through /proc (proctrack/linuxproc) and tasks are not confined (task/none).

Accounting: `sacct` reads only slurmdbd (a MySQL/MariaDB service); Debian's SLURM has no
file-based accounting storage. Where each job ran comes instead from the job completion
log (jobcomp/filetxt), one line per end of a job, requeues included.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
NODE = "kgbnode"
START_TIMEOUT_S = 60.0


def missing() -> str | None:
    """Why a SLURM cluster cannot be brought up here, or None where it can."""
    absent = [d for d in (*DAEMONS, "sbatch", "scontrol") if shutil.which(d, path=f"{os.environ['PATH']}:/usr/sbin") is None]
    if absent:
        return f"{', '.join(absent)} not installed (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "slurmd runs jobs as their submitter only as root"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Cluster:
    conf: Path  # slurm.conf: what SLURM_CONF names for every client command
    jobcomp: Path  # the job completion log: one line per end of a job
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

    def completions(self) -> list[dict[str, str]]:
        """The job completion log's records, e.g. {"JobId": "3", "Partition": "cpu", "JobState": "COMPLETED"}."""
        if not self.jobcomp.exists():
            return []
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in self.jobcomp.read_text().splitlines() if line]

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


def _write_conf(top: Path, partitions: tuple[str, ...]) -> Path:
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
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={top / 'jobcomp.txt'}",
        "ReturnToService=2",
        "MailProg=/bin/true",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=bf_interval=1,sched_interval=1",
        "GresTypes=gpu",
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


@contextmanager
def slurm_cluster(partitions: tuple[str, ...]) -> Iterator[Cluster]:
    """Start munged, slurmctld and slurmd with one node in `partitions`; stop them (and remove
    their files) on exit. The first partition is the default."""
    top = Path(tempfile.mkdtemp(prefix="kgb-slurm-"))
    for sub in ("munge", "state", "spool", "logs"):
        (top / sub).mkdir()
    os.chmod(top / "munge", 0o700)
    key = top / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = _write_conf(top, partitions)
    cluster = Cluster(conf, top / "jobcomp.txt", top / "logs")
    daemons: list[subprocess.Popen] = []
    try:
        munge = top / "munge"
        daemons.append(subprocess.Popen(
            [_sbin("munged"), "--foreground", "--force", f"--socket={munge / 'munge.socket'}",
             f"--key-file={key}", f"--pid-file={munge / 'munged.pid'}", f"--seed-file={munge / 'seed'}",
             f"--log-file={top / 'logs' / 'munged.log'}"],
            stdout=subprocess.DEVNULL, stderr=(top / "logs" / "munged.err.log").open("w"), start_new_session=True))
        _wait(lambda: (munge / "munge.socket").exists(), "munged", cluster, daemons)
        for daemon in ("slurmctld", "slurmd"):
            extra = ["-N", NODE] if daemon == "slurmd" else ["-i"]
            daemons.append(subprocess.Popen(
                [_sbin(daemon), "-D", "-f", str(conf), *extra], env=cluster.env,
                stdout=subprocess.DEVNULL, stderr=(top / "logs" / f"{daemon}.err.log").open("w"),
                start_new_session=True))
        _wait(lambda: _node_idle(cluster), "the node to be idle", cluster, daemons)
        yield cluster
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(timeout=30)
        shutil.rmtree(top, ignore_errors=True)


def _node_idle(cluster: Cluster) -> bool:
    try:
        return cluster.run("sinfo", "--noheader", "--format=%T", f"--nodes={NODE}").split()[0] == "idle"
    except (RuntimeError, IndexError, subprocess.TimeoutExpired):
        return False


def _wait(ready, what: str, cluster: Cluster, daemons: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        dead = [d for d in daemons if d.poll() is not None]
        if dead:
            raise RuntimeError(f"{dead[0].args[0]} exited {dead[0].returncode}:\n{cluster.tail()}")
        if ready():
            return
        time.sleep(0.25)
    raise RuntimeError(f"waited {START_TIMEOUT_S:.0f}s for {what}:\n{cluster.tail()}")
