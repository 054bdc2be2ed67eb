"""Red team, session 46: what a candidate (or an agent's command) reaches outside its sandbox
besides files: other processes through the system calls that Landlock does not scope and the
seccomp filters let through, root's capabilities, and a secret that the engine's environment
keeps.

Each test is an attack that ran for real against the judge on the CPU and got through; each
asserts what the threat model (docs/design/threat-model.md) says should hold.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from kgb import operators
from kgb.evaluate import EngineDied, EvalSettings, Status, evaluate
from kgb.evaluate.sandbox import landlock_abi

SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)

PRELUDE = '''
import torch
import triton
import triton.language as tl
import os
import resource
import sys


@triton.jit
def _decoy(p):
    tl.store(p, 1.0)


def _harness_pid():
    """The harness's pid is in the name of the evaluation's folder (kgb.evaluate.workdirs),
    which is the candidate's HOME and TMPDIR: kgb-eval-<host>-<pid>-<random>/candidate."""
    return int(os.environ["HOME"].split("kgb-eval-")[1].split("-")[1])
'''

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


def test_a_candidate_cannot_change_the_resource_limits_of_the_harness(softmax):
    """prlimit(2) on another process needs only the same user: Landlock has no hook for it, the
    candidate's seccomp filter lets it through, and the candidate process shares the host's PID
    namespace. The harness's pid is in the candidate's HOME. Lowering its RLIMIT_CPU to one
    second kills it (and the whole job); here a harmless limit is lowered instead, and put back."""
    before = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    source = PRELUDE + f'''

def softmax_int(self, dim, dtype=None):
    old = resource.prlimit(_harness_pid(), resource.RLIMIT_MSGQUEUE, (4242, {before[1]}))
    raise RuntimeError(f"REACHED the harness: its RLIMIT_MSGQUEUE was {{old}}")
'''
    try:
        verdict = evaluate(source, softmax, SMOKE)
        after = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    finally:
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, before)
    assert verdict.status != Status.CORRECT
    assert after == before, f"the candidate set the harness's RLIMIT_MSGQUEUE to {after}: {verdict.message[:300]}"


def test_a_candidate_cannot_kill_the_engine_that_other_trials_share(softmax):
    """The same hole, aimed at the warm engine every evaluation of these settings forks its
    judge from: a session leader started after the harness (os.getsid is unchecked). With its
    RLIMIT_CPU at one second, the kernel kills it the next time it runs; the next evaluation
    of the job (here the operator's own solution) fails with EngineDied, an infrastructure
    failure: no verdict, retried by every run, and every judge then in flight dies with it."""
    source = PRELUDE + '''
import time


def softmax_int(self, dim, dtype=None):
    judge, harness = os.getppid(), _harness_pid()
    for pid in range(harness + 1, judge):
        try:
            if os.getsid(pid) == pid:
                resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1))
        except OSError:
            pass
    time.sleep(3)
    raise RuntimeError("a wrong answer")
'''
    evaluate(source, softmax, SMOKE)
    time.sleep(2)
    try:
        honest = evaluate(softmax.solution_path.read_text(), softmax, SMOKE)
    except EngineDied as e:
        pytest.fail(f"the candidate killed the engine: the next evaluation raised {e!r}")
    assert honest.status == Status.CORRECT, honest.message


def test_a_candidate_holds_no_capability_even_as_root(softmax):
    """Where the harness runs as root, its candidate processes keep root's capabilities
    (the shell sandbox dropped them; the candidate's sandbox did not until session 46:
    `kgb.evaluate.sandbox.drop_capabilities`, in the `lock_down` both share). Landlock lets the workspace make device nodes (its rule there is every right),
    and a device node is opened by its own path: the candidate makes one for /dev/kmsg (or a
    disk) in its workspace and reads what the sandbox denied at /dev/kmsg. Also reached:
    reboot(2) (CAP_SYS_BOOT: a call with no magic number fails with EINVAL, not EPERM),
    sethostname on the host, SCHED_FIFO and nice -20."""
    if os.geteuid() != 0:
        pytest.skip("only root holds capabilities to keep")
    source = PRELUDE + '''
import stat


def softmax_int(self, dim, dtype=None):
    found = []
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    found.append(f"CapEff={status['CapEff'].strip()}")
    node = os.path.join(os.environ["HOME"], "zero")
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers, in the workspace
        fd = os.open(node, os.O_RDONLY)
        found.append(f"MKNOD-READ {os.read(fd, 4)!r}")
    except OSError as e:
        found.append(f"mknod refused: {e}")
    raise RuntimeError("CAPS " + " | ".join(found))
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert "CAPS" in verdict.message, verdict.message
    assert "CapEff=0000000000000000" in verdict.message, verdict.message
    assert "MKNOD-READ" not in verdict.message, verdict.message


def test_the_candidates_seccomp_filter_alone_lets_no_signal_out():
    """Without Landlock's signal scoping (ABI < 6: kernels before 6.12, most GPU hosts'), the
    candidate's seccomp filter is the only fence between it and the harness's processes
    ("kill only of itself"): it checks kill and tgkill, but pidfd_send_signal and
    rt_sigqueueinfo (sigqueue(3)) SIGKILL any process of the same user, the candidate's
    judge (reported as killed from outside: an infrastructure failure) or the harness."""
    victims = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    try:
        time.sleep(0.3)
        pid = os.fork()
        if pid == 0:
            from kgb.evaluate import seccomp_filter
            from kgb.evaluate.sandbox import apply_seccomp, libc

            libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
            apply_seccomp(seccomp_filter.program(allow_exec=False))
            if platform_numbers := {"x86_64": (434, 424, 129), "aarch64": (434, 424, 138)}.get(os.uname().machine):
                pidfd_open, pidfd_send_signal, rt_sigqueueinfo = platform_numbers
                fd = libc.syscall(pidfd_open, victims[0].pid, 0)
                if fd >= 0:
                    libc.syscall(pidfd_send_signal, fd, signal.SIGKILL, None, 0)

                class SigInfo(ctypes.Structure):
                    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int),
                                ("pad", ctypes.c_byte * 116)]

                info = SigInfo(signal.SIGKILL, 0, -1)  # SI_QUEUE
                libc.syscall(rt_sigqueueinfo, victims[1].pid, signal.SIGKILL, ctypes.byref(info))
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.3)
        assert [v.poll() for v in victims] == [None, None], "a process under the candidate's filter killed another"
    finally:
        for v in victims:
            if v.poll() is None:
                v.kill()
                v.wait()


def test_a_conda_token_in_a_channel_url_never_reaches_a_candidate(softmax, monkeypatch):
    """The engine keeps CONDA_* and drops a value only where its URL has a password
    (user:password@). Anaconda's own form puts the token in the path, /t/<token>/ (what
    `conda config --set channel_alias https://repo.anaconda.cloud/t/<TOKEN>` documents):
    it reached the candidate, whose error message an agent's check report shows."""
    token = "tk-7f3a9c2e5b1d4f60a8"
    monkeypatch.setenv("CONDA_CHANNEL_ALIAS", f"https://repo.anaconda.cloud/t/{token}/")
    source = PRELUDE + '''

def softmax_int(self, dim, dtype=None):
    raise RuntimeError("ENV " + repr(sorted(os.environ.items())))
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert "ENV" in verdict.message, verdict.message
    assert token not in verdict.message + verdict.logs


def test_a_command_without_a_pid_namespace_cannot_change_the_harness(tmp_path):
    """Where the kernel refuses the command a PID namespace (no unprivileged user namespaces:
    Ubuntu 24.04's default AppArmor rule, many containers), `reaper.supervise` runs the command
    in the host's, and warns only where Landlock cannot scope signals (ABI < 6). But prlimit(2)
    and setpriority(2) are not signals: the confined command lowers the harness's limits (its
    pid is in the trial folder's name, kgb-agent-<host>-<pid>-...), RLIMIT_CPU included."""
    (tmp_path / "workspace").mkdir()
    before = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    harness = os.getpid()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            from kgb.agents.shell_sandbox import confine_shell

            confine_shell(tmp_path)  # what the command does in supervise's fallback, in the host's PID namespace
            resource.prlimit(harness, resource.RLIMIT_MSGQUEUE, (4242, before[1]))
            os.write(write, b"changed")
        except BaseException as e:  # noqa: BLE001
            os.write(write, repr(e).encode()[:200])
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    said = os.read(read, 4096).decode()
    os.close(read)
    after = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, before)
    assert after == before, f"a confined command set the harness's RLIMIT_MSGQUEUE to {after} ({said})"


def test_the_models_key_is_kept_from_the_judges_whatever_its_name(monkeypatch):
    """`model.api_key_env` names the variable that holds the model's key, whatever it is called;
    until session 46 no job passed it to the judges' settings, so a key under a name the
    engine keeps (KGB_*) that looks like nothing secret reached every candidate."""
    from kgb.config import ChipConfig, Config, EvalConfig, ExpertConfig, LLMConfig, SourceConfig
    from kgb.evaluate.environment import engine_env
    from kgb.job import Chip, eval_settings, secret_env

    monkeypatch.setenv("KGB_LLM_CRED", "sk-test-123-not-named-like-a-secret")
    model = LLMConfig(name="m", provider="openai", api_key_env="KGB_LLM_CRED")
    cfg = Config(method=ExpertConfig(), model=model, source=SourceConfig("aten"), chip=ChipConfig(), eval=EvalConfig())
    settings = eval_settings(cfg.eval, Chip("cpu", "cpu", "", True, "here"), secret_env(cfg))
    assert "KGB_LLM_CRED" not in engine_env(settings)
    assert "KGB_LLM_CRED" in engine_env(eval_settings(cfg.eval, Chip("cpu", "cpu", "", True, "here")))  # by name alone
