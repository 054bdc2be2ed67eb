"""The evaluator's judgement of one candidate."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

# Bumped whenever a change to the judge can change a verdict or a timing: it is part of a
# trial's identity, so results judged under different judges are never mixed.
# v9: the kernel clock's protocol flushes the L2 by reading, as v7's did; v8 flushed it by
# writing, which the timed call paid to write back (kgb.evaluate.timing.Protocol.flush_reads);
# and the candidate's recorded call waits for the judge's word after its own clock, where it
# went on by itself beside any turn asked for meanwhile.
# A measurement whose repetitions hold different numbers of device activities keeps the events' time.
# v10: a verdict that says the GPU ran out of memory in its message, or as Triton's launcher
# says it, runs again when others shared the GPU, where it was the candidate's runtime error,
# and so does one that left a case without its latency or baseline for running out;
# the kernel clock's profiler runs from before the timing turn to after it, one session for
# all the turn's measurements, where each measurement started and stopped its own in the turn.
# v11: the timing process (v15: the candidate process) draws a bench case's sets T and V
# itself from their seeds, where it received them, and set T's pure outputs are poisoned as
# V's are (kgb.evaluate.draws).
# v12: the judge replays a recorded call for its check with every allocation filled (NaN, or
# an integer's largest value), where fresh memory read as zeros: a zeros_like that never
# wrote its large outputs was correct and timed at one store (correctness.allocations_filled);
# a call not captured before its turn is captured in the turn only under 100 us.
# v13: on the CPU the candidate process's malloc fills every block it returns (glibc's
# M_PERTURB), where the system's fresh pages read as zeros and a zeros_like that never wrote
# its outputs over 256 KB was correct on its check cases (correctness.fill_allocator_with_garbage).
# v14: the replay's final check poisons what the call returns in a tensor made before it: a
# candidate that kept its answer between calls and made one decoy store was timed at the decoy
# (replay.Replay.poison_what_it_returns_from_before).
# v15: the candidate process times too, once every case is checked, where a second candidate
# process that had seen no check input timed: one CUDA context fewer per evaluation to start
# (kgb.evaluate.bench_case.BenchCaseTiming.stage says why the checks after timing suffice).
# v16: each repetition of a call estimated under 100 us starts after a spin of the GPU, so
# that the host's time to queue the call is not in a time read from events (the views); the
# judge's and candidate's CUDA contexts have one hardware work queue, not eight
# (kgb.evaluate.environment.engine_env); the replay's launchers are built before its warm-up, which the
# first warm-up call's launcher build had cut to one call.
# v17: a timed call whose profile lost a device activity's record in some repetitions is timed
# by the GPU's count of those recorded whole, where they are most of them, not by events
# (kernel_clock.KernelClock.share); a call with no device work (a view) is timed by its
# fastest call by events, not their median (timing.Timing.counted); the replay keeps no copy
# of set V's storages and does not replay a recorded call that names one
# (staged_replay.StagedReplay); the baseline is timed on set T as drawn, not a clone of it.
# v18: whether a call is timed on its graph is decided by its graph's fastest of five replays,
# each after the spin, not their median without it: a loaded host's time to queue the graph had
# a view's candidate timed eagerly at 26 times its baseline (timing.measure).
# v19: a measurement stops once its median's 95% interval is within 1% of it (0.5% before), a
# call's repetitions are kept to about 0.25 s (0.5 s) and at least 3 (5) (kgb.evaluate.timing).
# v20: a measurement first lets the GPU rest while its power cap or heat holds the clock down,
# up to 0.3 s, and no more in a judge whose GPU stayed held through three such waits in a row
# (nvml.wait_for_clocks).
# v21: a baseline is timed only once the candidate process is killed and reaped, in the
# judgement's last turn (an earlier turn's baselines in one more after it): candidate code
# left running in that process could slow the baseline beside it (bench_timing).
# v22: every call of the replay, timed or checked, starts from one state, set up outside the
# timed region: set V's values in set T's buffers, the outputs and what earlier calls allocated
# poisoned, the storages made before the call as recorded (staged_replay.StagedReplay.before_each);
# the checked call after the same L2 flush, no longer with its allocations filled. A kernel that
# skipped the work a timed call found done was timed skipping and checked computing. And every
# call's answer is audited against the reference's by a digest (call_audit): one that skipped
# at random, or by state the reset does not reach, was checked only if it was the last.
# v23: each call of the replay also keeps SAMPLED_ELEMENTS of each output, at positions drawn
# once it has run, each checked against the reference's by the comparison's own rule: a digest
# took an answer whose magnitudes sum like the right one's (a softmax row of 1/n) for right
# (call_audit.sampled); and calls are audited at random past the first eight (the i-th with
# probability 8/i), where auditing every call took 68 of a first job's 153 s of measuring turns
# on the H200. A baseline timed in a crowded turn says so (CaseResult.baseline_turn).
# v24: a candidate process's replies report only its own failures (one that said "correct" was
# the verdict, with no case run); a judge killed from outside is told by its wait status, not
# by words a candidate can raise; tensors inside list arguments must be left unmodified too;
# the judges' environment keeps only what the libraries read; on the CPU every value a kernel
# loads must be explained as an output value is (kgb.evaluate.provenance_audit: a copy kernel
# took host-computed answers for a kernel's).
# v25: a candidate process opens no socket (a daemon's Unix socket was reachable by its path);
# on a GPU a call that copies more than 64 values back to the host is rejected (an answer
# computed with numpy from `.cpu()` was correct there; integrity.HOST_READ_LIMIT).
# v26: on a GPU no candidate is correct without the judge's own replay of every bench case: one it
# cannot replay is rejected, one whose replay faulted or ran out of memory a runtime error (until
# v25 the case was left untimed and the verdict stood, which a forged recording could choose);
# a candidate process acts on no other process by its pid (prlimit, setpriority, pidfds), holds
# no capability and makes no device node.
# v27: the candidate process keeps no clock of its own: its three eager calls between the first
# and the recorded call, reported beside the latency and never taken for it, and the work
# section they held, which timing turns waited to drain, are gone. A call of a millisecond or
# more settles over ten repetitions, not twenty, and is estimated from one call, not five
# (kgb.evaluate.stopping_rule.fewest). On the CPU an interpreted kernel that names anything but
# Triton's functions and values (a plain Python helper running numpy on the loaded block) is a
# compile error, as on a GPU (kgb.evaluate.kernel_calls); it was `correct`. A candidate's reply may
# hold only what its call's inputs and the reference's outputs justify (candidate_call.ReplyBound),
# refused unread past it: a smoke case's could announce 4 GB, which the judge read into its memory.
# A candidate process makes no FIFO or socket file (a FIFO where the harness read a compile-check
# report hung it), and nothing a candidate leaves in its workspace or its compile cache makes the
# harness raise (a nest of 1,500 folders, a cache file too deep for json: infra_error until then).
# v28: on the CPU provenance follows memory (kgb.evaluate.address_book): every byte a kernel loads,
# and every byte of an output, must be one the judge sent, a kernel stored, or a PyTorch op wrote
# from known bytes or from what the source and the call fix; bytes numpy, ctypes or Python wrote
# are refused (a host buffer spelling the answer in values that each explain a load was `correct`,
# session 49). A table of pointers built on the host is taken only where every entry a kernel
# loads is where a tensor the call knows starts, and holds no more entries than the call knows
# tensors. GPU verdicts are unchanged.
# v29: on a GPU the replay warms up on set V's floating storages turned (kgb.evaluate.first_call),
# and its first call on set V's own values, in the turn, is timed alone: a case whose first call
# took over 1.5 times the repetitions' median plus 2 us is timed by it. A kernel that kept its
# answer past the end of a buffer, where no reset reaches, and copied it out when it found the
# same inputs was right in every call and timed as its copy. The audit leaves the warm-up's calls
# out but counts them towards the odds of the rest, and always checks the first call on set V
# (kept whole where the spec compares its own way, when two copies fit KEPT_BYTES, the other kept
# calls then in what it leaves). CPU verdicts are unchanged.
# v30: an evaluation that timed a case by its first call runs again, on inputs drawn from new
# secret seeds, up to twice, and the last run's verdict stands (kgb.evaluate.evaluate): an
# honest first call took 1.52-2.08 times its repetitions' median in 3 of the 7 times its case was
# timed (session 53, H100s; another process starting CUDA beside it), and one call has no median
# to shrug that off. Such a case says it was timed so (TimedBy.FIRST_CALL). With a false alarm
# costing a run, not a timing, the bound tightens from 1.5 to 1.25 times the repetitions' median
# plus 2 us (first_call.FIRST_RATIO): a kernel that copies a kept answer gains at most that. The
# warm-up turns integer storages too where the spec names them plain values (Spec.turned_args:
# comparisons, divisions, unary and row-wise ATen ops, sort). CPU verdicts are unchanged.
# v31: where no storage of a replay's inputs turns (integer inputs only, quantised weights, expert
# ids), its warm-up runs on another draw of the case from a secret seed (first_call.Drawn), where
# it ran on the timed values themselves: such a case's first call on set V is timed alone too. A
# tensor that covers its storage in another order than its own (a transpose) turns as a
# contiguous one does. An evaluation run again for a case timed by its first call times each
# replay holding the GPU's quiet gate whole (kgb.evaluate.quiet_gate): it waits up to 3 s for the
# CUDA starts under way to end, and no other starts meanwhile. CPU verdicts are unchanged.
# v32: that replay shuts the gate's door before it waits, so no new start or release begins while
# those under way end; changes that overlapped without end kept it waiting its whole 3 s before
# (session 55's H100). CPU verdicts are unchanged.
# v33: a case the judge times has no check of its own before its timing: its timing's checks
# judge it, the candidate process's answer on set V (a draw from a secret seed) and the judge's
# replay of its recorded GPU work on it, checked after the turn as before; that last call of the
# candidate process is audited as a checked call is (PyTorch ops, Triton launches, hooks, values
# read back to the host), its reply bounded by the reference's outputs on set T, and the replay's
# checked call must leave the arguments it does not write as set V's values were sent. The check
# on the case's own seed cost each bench case another draw, call, crossing of its outputs and
# comparison. A bench case wrong on set V is `wrong_output` "after timing, on fresh inputs", as a
# remembered answer was. CPU verdicts are unchanged.
# v34: on a GPU an output of two million elements or more in float16, bfloat16, float32 or
# float64 is compared, and its tolerance's scale summed, by one Triton kernel of the judge's
# each (kgb.evaluate.comparison_kernels), where some 30 PyTorch ops a chunk of two million
# elements did: the same float64 arithmetic, but the tolerance's bound may round once where the
# ops round twice, and the scale adds in another order (a float64's last bits). The baselines'
# warm-ups may run while the candidate process ends. CPU verdicts are unchanged.
# v35: nothing the candidate process computes on a timed case comes back: its answer on set V
# neither crosses nor is checked, and the judge checks its replay of the recorded call alone,
# which is what a GPU's verdict stood on. A wrong replay is `wrong_output` "after timing, on
# fresh inputs", where the process's right answer beside it made it `rejected`; its maxima are
# the replay's. The reply is bounded by the recording's snapshots, and no reference on set T
# is computed for it. The recorded call itself is audited as a checked call is (PyTorch ops,
# Triton launches, hooks, values read back to the host; the recorder's snapshots of tensors made
# before it are left out, as the judge's own copies), where a last call after it was from v33:
# one call fewer, and the audited call is the one replayed. On a GPU the check that an input the
# call must not write was left untouched is one Triton kernel for a tensor of two million
# elements or more (floating or integer; `comparison_kernels.differing`), the same exact
# equality as the six ops it replaces. CPU verdicts are unchanged.
# v36: on a GPU the audit's digest of what a timed call wrote (kgb.evaluate.call_audit) is one
# Triton kernel for a floating output of two million elements or more
# (`comparison_kernels.digested`), where about ten ops a chunk read and wrote the output some
# eleven times over, in the turn, after each audited call: the same counts, and the magnitudes
# summed in another order (a float64's last bits, within the audit's SUM_SLACK). CPU verdicts
# are unchanged.
# v37: on a GPU the kernels a check case's reference compiles at their first use (PyTorch's
# jiterator: polygamma, i0, erfc, special_entr) are compiled before its work section, by a
# capture of its call into a CUDA graph that is dropped unreplayed (kgb.evaluate.first_use),
# and the draw and the reference are work sections of their own. Verdicts are unchanged.
# (Measured on an H100 as 6b8ad95; its signatures then told layouts and alignments apart, and
# its captures took the quiet gate and one stream per judge: run on an H100 in session 67.)
JUDGE_VERSION = 37


class Status(StrEnum):
    """Outcome of evaluating one candidate, from worst to best."""

    REJECTED = "rejected"  # failed the static or integrity check
    COMPILE_ERROR = "compile_error"  # did not import or its kernel did not compile
    RUNTIME_ERROR = "runtime_error"  # raised, or the worker process died
    TIMEOUT = "timeout"  # the worker ran past eval.timeout_s and was killed
    WRONG_OUTPUT = "wrong_output"  # ran, but some output is outside tolerance
    CORRECT = "correct"  # every case passed and the integrity audit is clean


class TimedBy(StrEnum):
    """Whose clock a case's latency comes from."""

    JUDGE = "judge"  # the judge's replay of the call's recorded GPU work (kgb.evaluate.replay)
    # the judge's replay, by its first call on the timed inputs alone, which took far longer
    # than the calls after it (judge v29, kgb.evaluate.first_call)
    FIRST_CALL = "first call"
    # the candidate process's own clock, which a hostile candidate can patch: logs of judge v3
    # only (since judge v4 a call the judge cannot replay is left untimed)
    CANDIDATE = "candidate"


class Rerun(StrEnum):
    """Why an evaluation ran again, the verdict of its earlier run set aside (kgb.evaluate.evaluate)."""

    RAN_OUT = "ran_out"  # the GPU ran out of memory while other evaluations shared it
    FIRST_CALL = "first_call"  # a case was timed by its first call on the timed inputs (judge v30)


class Turn(StrEnum):
    """Whether a measurement had the GPU to itself in its timing turn (kgb.evaluate.timing_lock)."""

    ALONE = "alone"
    # another evaluation's work section ran on past the turn's wait for it (DRAIN_LIMIT_S): a
    # candidate hanging in its check, or GPU work queued where no section covers it
    CROWDED = "crowded"


# What a timing mode adds for a measurement whose turn was crowded
CROWDED_TURN = "timed while another evaluation's check ran past the turn's wait for it"


class CacheUse(StrEnum):
    """Whether the candidate's Triton cache started with what an earlier evaluation of the
    same source compiled (kgb.evaluate.compile_cache)."""

    HIT = "hit"  # it started with the files an earlier evaluation of this source left
    MISS = "miss"  # no entry yet: it started empty, and what it left was offered to the store
    OFF = "off"  # eval.compile_cache is off: it started empty, and nothing was kept


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome. Latencies are None where nothing was timed (CPU, or failure)."""

    name: str
    tag: str
    status: Status
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    latency_us: float | None = None
    baseline_us: float | None = None
    latency_spread: float | None = None  # (p80 - p20) / median of the candidate's timings
    timing_mode: str | None = None  # "eager" or "graph", and why the candidate timed itself if it did
    timed_by: TimedBy | None = None
    baseline_from: str | None = None  # the BaselineMeasured event ("<job>#<seq>") the baseline is from
    # how the judge timed the baseline ("eager" or "graph", and the timing's note); None where
    # it was given a known one
    baseline_mode: str | None = None
    # whether the baseline's turn had the GPU to itself; None where it was given a known one. A
    # crowded baseline is this verdict's own, never given to later ones (kgb.tracking.baselines)
    baseline_turn: Turn | None = None

    @classmethod
    def from_record(cls, record: dict) -> CaseResult:
        """A case as the judge's result file holds it (JSON)."""
        enums = {"status": Status, "timed_by": TimedBy, "baseline_turn": Turn}
        return cls(**{k: enums[k](v) if k in enums and v is not None else v for k, v in record.items()})


@dataclass(frozen=True)
class Verdict:
    """The evaluator's judgement of one candidate."""

    status: Status
    message: str
    cases: tuple[CaseResult, ...] = ()
    logs: str = ""  # captured stderr of the worker (compile logs, tracebacks)
    baseline: str | None = None  # which speed baseline was timed (e.g. "torch", "libcublas")
    device: str = "cpu"
    kernels: tuple[str, ...] = ()  # names of the Triton kernels the candidate launched
    torch_ops: tuple[str, ...] = ()  # ATen ops the candidate dispatched
    eval_s: float = 0.0
    sandbox: str | None = None  # the candidate process's confinement (kgb.evaluate.sandbox.SandboxLevel)
    phase_s: dict[str, float] = field(default_factory=dict)  # the judge's wall seconds per phase (draw, candidate...)
    # the most GPU memory the judge's allocator held, and the candidate process's by its own
    # account, in MiB ("judge", "candidate"); empty on the CPU (kgb.evaluate.held_memory makes the memory table of it)
    gpu_mib: dict[str, int] = field(default_factory=dict)
    judge_s: float = 0.0  # the judge process's wall seconds (eval_s less the harness's and engine's share)
    gate_s: float = 0.0  # seconds waited for a place among the evaluations sharing the GPU's memory (gpus.MemoryGate)
    # seconds of earlier runs whose verdicts did not stand: they ran out of GPU memory among
    # others, or timed a case by its first call (kgb.evaluate.evaluate)
    ran_out_s: float = 0.0
    again: tuple[Rerun, ...] = ()  # each earlier run whose verdict did not stand, why
    # the harness's own wall seconds around the judge's run, by step (kgb.evaluate.COMPILE_STORE, ENGINE)
    harness_s: dict[str, float] = field(default_factory=dict)
    # None where no judge ran (a static rejection), and in logs older than the compile cache
    compile_cache: CacheUse | None = None

    @property
    def correct(self) -> bool:
        return self.status == Status.CORRECT

    @property
    def speedup(self) -> float | None:
        """Geometric mean over timed cases of baseline time / candidate time."""
        ratios = [
            c.baseline_us / c.latency_us
            for c in self.cases
            if c.latency_us and c.baseline_us and c.status == Status.CORRECT
        ]
        if not ratios or not self.correct:
            return None
        return geomean(ratios)

    @property
    def latency_us(self) -> float | None:
        timed = [c.latency_us for c in self.cases if c.latency_us]
        return geomean(timed) if timed and self.correct else None

    @property
    def baseline_us(self) -> float | None:
        timed = [c.baseline_us for c in self.cases if c.baseline_us and c.latency_us]
        return geomean(timed) if timed and self.correct else None


def geomean(values: list[float]) -> float:
    """Geometric mean of positive values (speedups, latencies)."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class EvalSettings:
    """How one candidate is evaluated (derived from the eval config and the chip)."""

    device: str = "cpu"  # torch device type: cpu (Triton interpreter), cuda, ...
    case_tags: tuple[str, ...] = ("smoke",)
    time_cases: tuple[str, ...] = ()  # tags of the cases that are timed (GPU only)
    timeout_s: float = 300.0
    repeats: int = 100
    warmup: int = 10
    extra_env: dict[str, str] = field(default_factory=dict)
    compile_for: int | None = None  # CPU only: also compile correct candidates for sm_<this>
    secret_env: tuple[str, ...] = ()  # variables holding secrets whatever their names (model.api_key_env)
    # the folder of compiled kernels kept per source (kgb.evaluate.compile_cache): a path,
    # "auto" ($XDG_CACHE_HOME/kgb/compile, else ~/.cache/kgb/compile), or None (off)
    compile_cache: str | None = "auto"


class Failed(Exception):
    """Ends the evaluation with a status and a message."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class InstrumentFailed(Exception):
    """The judge's own timing failed: the speed baseline (libcublas, PyTorch) raised, which
    may leave this process's CUDA context unusable. The candidate had passed every case and
    its replays by then; it stays correct, and the cases from that one on lack their baseline
    (a replay that fails is the candidate's: kgb.evaluate.bench_case)."""
