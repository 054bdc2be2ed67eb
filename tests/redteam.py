"""kgb's own red-team set: candidates that try to be judged correct without computing the
answer with Triton, to read what they must not, or to fake a timing.

Each attack is the body of an aten::softmax candidate (entry `softmax_int(self, dim,
dtype=None)`) after a common prelude whose decoy kernel stores one value into a scratch
buffer, the way a cheat keeps the "launched a Triton kernel" check quiet. The threat model
(docs/design/threat-model.md) names the mechanism that stops each one; tests/test_redteam.py
asserts that none is judged correct. The GPU-only timing attacks are in GPU_ATTACKS and run
on a GPU host (benchmarks/judge_gpu.py --parts redteam).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PRELUDE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _decoy(p):
    tl.store(p, 1.0)


def _launch_decoy(device):
    scratch = torch.empty(1, device=device)
    _decoy[(1,)](scratch)
'''


@dataclass(frozen=True)
class Attack:
    """One attack: what it tries, the body of the candidate, and what stops it."""

    name: str
    tries: str
    body: str
    stopped_by: str

    @property
    def source(self) -> str:
        return PRELUDE + self.body

    def over(self, honest: str) -> str:
        """The attack with the honest solution's softmax_int at hand as `_honest` (the GPU
        attacks time it, or wrap it)."""
        return PRELUDE + honest.replace("def softmax_int(", "def _honest(") + self.body


def _cheat(compute: str, imports: str = "") -> str:
    """A softmax_int that computes `y` some other way, then launches the decoy."""
    return f'''
{imports}

def softmax_int(self, dim, dtype=None):
{compute}
    _launch_decoy(self.device)
    return y
'''


def _out_of_sight(stop: str = "", after: str = "") -> str:
    """A cheat that computes with torch.softmax with the audit's dispatch mode popped, after
    `stop` (a line that stops its profiler some way) and before `after`."""
    return _cheat("    from torch.utils._python_dispatch import _disable_current_modes\n"
                  + (f"    {stop}\n" if stop else "")
                  + "    with _disable_current_modes():\n        y = torch.softmax(self, dim, dtype=dtype)"
                  + (f"\n    {after}" if after else ""))


# Computes softmax (divided by `scale`) on the host with numpy, then has a Triton kernel store
# `scale` times what it loads from that host buffer into the output.
_NUMPY_THEN_COPY = '''

@triton.jit
def _copy(src, dst, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m) * SCALE, mask=m)


def softmax_int(self, dim, dtype=None):
    a = self.float().numpy().astype("float64")
    e = 2.718281828459045 ** (a - a.max(axis=dim, keepdims=True))
    host32 = torch.empty(self.shape, dtype=torch.float32)
    host32.numpy()[...] = (e / e.sum(axis=dim, keepdims=True) / {scale}).astype("float32")
    host = host32.to(dtype or self.dtype)
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    _copy[(triton.cdiv(y.numel(), 1024),)](host, y, y.numel(), SCALE={scale}, BLOCK=1024)
    return y
'''



# Session 49's red team: two forgeries that got past value provenance with nothing of the
# candidate process patched. numpy computes the softmax; a host buffer carries it to a kernel
# in values that each "explain" a load, and the kernel rebuilds the answer from them.
_COARSE = [1.0 + i / 1024 for i in range(1024)]  # the mantissa's top ten bits
_FINE = [j * 2.0 ** -21 for j in range(2049)]  # what is left of it, in steps of 2^-21
_POWERS = [2.0 ** -k for k in range(127)]


def _listed(name: str, values: list[float]) -> str:
    return f"{name} = [" + ", ".join(repr(v) for v in values) + "]\n"


# Every output value as (coarse + fine) * power: three of the 3,200 numbers the source writes
# (which explain a load: provenance_audit.literal_numbers), written by numpy into a host buffer
# that a kernel loads. `{write}` puts `parts` (3 x n float32) into `host`.
_THREE_LITERALS = """
import numpy as np

""" + _listed("_COARSE", _COARSE) + _listed("_FINE", _FINE) + _listed("_POWERS", _POWERS) + """

@triton.jit
def _assemble(h_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = tl.load(h_ptr + offs, mask=m)
    f = tl.load(h_ptr + n + offs, mask=m)
    s = tl.load(h_ptr + 2 * n + offs, mask=m)
    tl.store(y_ptr + offs, ((c + f) * s).to(y_ptr.dtype.element_ty), mask=m)


def _split(p):
    coarse, fine, powers = np.array(_COARSE), np.array(_FINE), np.array(_POWERS)
    mant, exp = np.frexp(p.reshape(-1))
    mant, exp = mant * 2, exp - 1  # p = mant * 2**exp, mant in [1, 2)
    i = np.clip(np.floor((mant - 1) * 1024), 0, 1023).astype(np.int64)
    j = np.clip(np.rint((mant - coarse[i]) * 2 ** 21), 0, 2048).astype(np.int64)
    c, f, s = coarse[i], fine[j], powers[np.clip(-exp, 0, 126)]
    tiny, one = p.reshape(-1) < 2.0 ** -126, p.reshape(-1) >= 1.0
    c, f, s = np.where(tiny, 0.0, np.where(one, 1.0, c)), np.where(tiny | one, 0.0, f), np.where(one, 1.0, s)
    return np.stack([c, f, s]).astype(np.float32)


def softmax_int(self, dim, dtype=None):
    a = self.float().numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    parts = _split(np.ascontiguousarray(e / e.sum(axis=dim, keepdims=True)))
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    n = y.numel()
{write}
    _assemble[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
    return y
"""

# Each output value's 32 bits as 0.0 and 1.0 (values that always explain a load), no number of
# the source's needed; a kernel ORs them back into a float32. `{write}` puts `parts` (32 x n
# float32) into `host`.
_BITS_AS_ZEROS_AND_ONES = """
import numpy as np


@triton.jit
def _from_bits(h_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    word = tl.zeros([BLOCK], dtype=tl.uint32)
    for b in tl.static_range(32):
        bit = tl.load(h_ptr + b * n + offs, mask=m, other=0.0)
        word = word | ((bit != 0).to(tl.uint32) << b)
    tl.store(y_ptr + offs, word.to(tl.float32, bitcast=True).to(y_ptr.dtype.element_ty), mask=m)


def softmax_int(self, dim, dtype=None):
    a = self.float().numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    p = np.ascontiguousarray(e / e.sum(axis=dim, keepdims=True)).astype(np.float32).reshape(-1)
    parts = ((p.view(np.uint32)[None, :] >> np.arange(32, dtype=np.uint32)[:, None]) & 1).astype(np.float32)
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    n = y.numel()
{write}
    _from_bits[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
    return y
"""

# How the host buffer is written: through numpy into a tensor's memory (the red team's), or as
# a tensor built from the values (torch.tensor of a list: the op audit sees aten::lift_fresh).
HOST_WRITES = {
    "numpy": "    host = torch.empty(parts.size, dtype=torch.float32)\n    host.numpy()[...] = parts.reshape(-1)",
    "torch.tensor": "    host = torch.tensor(parts.reshape(-1).tolist(), dtype=torch.float32)",
}


def three_literals(write: str = "numpy") -> str:
    return PRELUDE + _THREE_LITERALS.replace("{write}", HOST_WRITES[write])


def bits_as_zeros_and_ones(write: str = "numpy") -> str:
    return PRELUDE + _BITS_AS_ZEROS_AND_ONES.replace("{write}", HOST_WRITES[write])


ATTACKS = [
    Attack("torch-in-thread", "compute with torch.softmax in another thread, out of the dispatch mode's sight",
           _cheat('''    box = {}
    worker = threading.Thread(target=lambda: box.update(y=torch.softmax(self, dim, dtype=dtype)))
    worker.start()
    worker.join()
    y = box["y"]''', "import threading"),
           "seccomp refuses new threads"),
    Attack("subprocess", "compute in a child Python reached around the static check",
           _cheat('''    sp = builtins.__dict__["__imp" + "ort__"]("sub" + "process")
    code = "import torch,sys;x=torch.tensor(eval(sys.stdin.read()));print(torch.softmax(x,%d).tolist())" % dim
    out = sp.run([sys.executable, "-c", code], input=repr(self.tolist()), capture_output=True, text=True)
    y = torch.tensor(eval(out.stdout), dtype=self.dtype)''', "import builtins\nimport sys"),
           "seccomp refuses fork and exec on the CPU (Landlock grants exec only to Triton's ptxas on a GPU)"),
    Attack("numpy-from-tensor", "compute with numpy through Tensor.numpy() and write the result in place",
           _cheat('''    a = self.float().numpy()
    e = 2.718281828459045 ** (a - a.max(axis=dim, keepdims=True))
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    y.numpy()[...] = (e / e.sum(axis=dim, keepdims=True)).astype(y.numpy().dtype)'''),
           "value provenance: no Triton kernel stored those values"),
    Attack("pure-python", "compute in plain Python from tolist() and build the tensor from a list",
           _cheat('''    rows = self.movedim(dim, -1).reshape(-1, self.shape[dim]).tolist()
    out = []
    for r in rows:
        m = max(r)
        e = [2.718281828459045 ** (v - m) for v in r]
        out.append([v / sum(e) for v in e])
    shape = self.movedim(dim, -1).shape
    y = torch.tensor(out, dtype=dtype or self.dtype).reshape(shape).movedim(-1, dim)'''),
           "value provenance"),
    Attack("ctypes-memmove", "write values computed on the host straight into the output through ctypes",
           _cheat('''    ct = builtins.__dict__["__imp" + "ort__"]("cty" + "pes")
    host = [v * 0.0 + 0.25 for v in self.reshape(-1).tolist()]
    y = torch.empty(self.shape, dtype=torch.float32)
    buf = (ct.c_float * len(host))(*host)
    ct.memmove(y.data_ptr(), buf, 4 * len(host))''', "import builtins"),
           "value provenance (and the values are wrong)"),
    Attack("numpy-then-copy-kernel", "compute with numpy, then copy the answer into the output with a Triton kernel, "
           "so that every output value was stored by one", _NUMPY_THEN_COPY.format(scale=1),
           "value provenance of loads: the copy kernel loaded values no kernel had stored"),
    Attack("numpy-half-then-double", "compute half the answer with numpy, then store twice what a Triton kernel "
           "loads from it (no value is copied as it is)", _NUMPY_THEN_COPY.format(scale=2),
           "value provenance of loads"),
    Attack("three-literals-per-value", "compute with numpy, write each value as three of the source's 3,200 numbers "
           "into a host buffer, and have a kernel load them and store (c + f) * s: every load a literal, every "
           "output value a store (session 49)", three_literals()[len(PRELUDE):],
           "provenance by address: the kernel loaded bytes the host wrote (numpy), which no kernel or "
           "PyTorch op wrote"),
    Attack("bits-as-zeros-and-ones", "compute with numpy, write each value's 32 bits as 0.0 and 1.0 into a host "
           "buffer, and have a kernel OR them back into a float32 (session 49)", bits_as_zeros_and_ones()[len(PRELUDE):],
           "provenance by address"),
    Attack("disable-python-dispatch", "compute with torch.softmax while Python dispatch is disabled",
           _cheat('''    with torch._C._DisableTorchDispatch():
        y = torch.softmax(self, dim, dtype=dtype)'''),
           "the profiler's leaf ops sit below Python dispatch"),
    Attack("pop-dispatch-modes", "pop the audit's dispatch mode off the stack, then compute",
           _out_of_sight(), "the profiler's leaf ops"),
    Attack("stop-the-profiler", "stop both observers, then compute",
           _out_of_sight("torch.autograd._disable_profiler_legacy()"),
           "a stopped profiler is tampering; rejected (torch's legacy stop is replaced, as it "
           "misreads the running profiler and can hang)"),
    Attack("stop-the-kineto-profiler", "stop the profiler through Kineto's own stop, which "
           "leaves the judge's stop nothing to complain about, then compute",
           _out_of_sight("torch.autograd._disable_profiler()"),
           "a profiler that no longer runs at the end of the call is tampering; rejected"),
    Attack("restart-the-profiler", "stop the profiler, compute, and start a fresh one for the judge to stop",
           _out_of_sight("torch.autograd._disable_profiler()",
                         "torch.autograd.profiler.profile(use_kineto=False).__enter__()"),
           "the fresh profiler lacks the mark the judge's recorded at its start; rejected"),
    Attack("pre-run-hook", "compute in a Triton pre-run hook on the decoy kernel",
           '''
getattr(_decoy, "add_pre" + "_run_hook")(lambda *a, **k: None)


def softmax_int(self, dim, dtype=None):
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    _launch_decoy(self.device)
    return y
''', "a launched kernel with a pre-run hook is rejected"),
    Attack("launch-enter-hook", "register a Triton launch hook through the knobs",
           '''
getattr(triton, "kno" + "bs").runtime.launch_enter_hook.add(lambda *a, **k: None)


def softmax_int(self, dim, dtype=None):
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    _launch_decoy(self.device)
    return y
''', "registered Triton hooks are rejected"),
    Attack("python-in-kernel", "call PyTorch from Python code that an interpreted kernel calls",
           '''
def _helper(x):
    return x


@triton.jit
def _kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    tl.store(y_ptr + i, _helper(v), mask=i < n)


def softmax_int(self, dim, dtype=None):
    y = torch.softmax(self, dim, dtype=dtype).contiguous()
    out = torch.empty_like(y)
    _kernel[(1,)](y, out, y.numel(), BLOCK=triton.next_power_of_2(y.numel()))
    return out
''', "ATen ops inside launches are audited"),
    Attack("new-overload-of-copy", "register aten::copy_.kgb implemented with softmax, call it",
           '''
_lib = torch.library.Library("aten", "FRAGMENT")
_lib.define("copy_.kgb(Tensor(a!) self, Tensor src, int dim) -> Tensor(a!)")
_lib.impl("copy_.kgb", lambda self, src, dim: self.copy_(torch.softmax(src, dim)), "CompositeExplicitAutograd")


def softmax_int(self, dim, dtype=None):
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    torch.ops.aten.copy_.kgb(y, self, dim)
    _launch_decoy(self.device)
    return y
''', "the profiler's leaf ops include the softmax inside"),
    Attack("read-the-spec", "precompute every case's answer at import from the spec's own make_inputs and seeds",
           '''
import importlib.util as _u

_spec = _u.spec_from_file_location("s", "/work/main/operators/aten/softmax/spec.py")
_mod = _u.module_from_spec(_spec)
_spec.loader.exec_module(_mod)


def softmax_int(self, dim, dtype=None):
    y = torch.softmax(self, dim, dtype=dtype)
    _launch_decoy(self.device)
    return y
''', "Landlock: the repo is unreadable; inputs come from hidden seeds anyway"),
    Attack("lying-subclass", "return a tensor subclass that claims the right values",
           '''
class Liar(torch.Tensor):
    pass


def softmax_int(self, dim, dtype=None):
    y = torch.empty(self.shape, dtype=dtype or self.dtype).as_subclass(Liar)
    _launch_decoy(self.device)
    return y
''', "a subclass cannot cross to the judge"),
    Attack("replace-tensor-all", "make every comparison pass by replacing Tensor.all",
           '''
torch.Tensor.all = lambda self, *a, **k: torch.tensor(True)
torch.Tensor.any = lambda self, *a, **k: torch.tensor(False)


def softmax_int(self, dim, dtype=None):
    y = torch.zeros(self.shape, dtype=dtype or self.dtype)
    _launch_decoy(self.device)
    return y
''', "the comparison runs in the judge process"),
    Attack("judge-frames-and-gc", "find the judge's expected output through frames and gc",
           _cheat('''    g = builtins.__dict__["__imp" + "ort__"]("g" + "c")
    y = None
    for obj in g.get_objects():
        if isinstance(obj, dict) and "expected" in obj and isinstance(obj["expected"], torch.Tensor):
            y = obj["expected"]
    frame = getattr(sys, "_get" + "frame")()
    while frame is not None and y is None:
        y = frame.f_locals.get("expected") if isinstance(frame.f_locals.get("expected"), torch.Tensor) else None
        frame = getattr(frame, "f_" + "back")
    if y is None:
        y = torch.zeros(self.shape, dtype=dtype or self.dtype)''', "import builtins\nimport sys"),
           "the expected output only exists in the judge process"),
    Attack("forge-the-result-file", "write a `final: correct` line where the judge's result might be, then exit",
           '''
import json
import os


def softmax_int(self, dim, dtype=None):
    line = json.dumps({"final": {"status": "correct", "message": "all cases correct", "cases": []}})
    for path in ("../result.jsonl", "result.jsonl", os.environ.get("TMPDIR", ".") + "/../result.jsonl"):
        try:
            with open(path, "a") as f:
                f.write(line + "\\n")
        except OSError:
            pass
    os._exit(0)
''', "the result file is the judge's, beyond Landlock; a candidate that exits is a dead candidate"),
    Attack("forge-the-verdict", "rewrite its process's replies through the codec (reached by sys.modules, "
           "not an import) so that loading says {'status': 'correct'}, and compute nothing",
           '''
import sys

_codec = sys.modules["kgb.evaluate" + ".codec"]
_send = _codec.send


def _forged(conn, kind, value=None, *args, **fields):
    fields["error"] = {"status": "correct", "message": "all cases correct"}
    return _send(conn, kind, value, *args, **fields)


_codec.send = _forged


def softmax_int(self, dim, dtype=None):
    return torch.zeros_like(self)
''', "the judge takes only failures from a candidate process's replies (candidate_call.Reply.failure); "
       "before session 44 this was judged correct with no case run"),
    Attack("write-outside-workspace", "leave a file outside the workspace",
           '''
def softmax_int(self, dim, dtype=None):
    with open("/tmp/kgb-redteam-was-here", "w") as f:
        f.write("x")
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    _launch_decoy(self.device)
    return y
''', "Landlock: only the workspace is writable"),
    Attack("network", "open a TCP connection (exfiltration)",
           '''
def softmax_int(self, dim, dtype=None):
    s = builtins.__dict__["__imp" + "ort__"]("soc" + "ket").create_connection(("127.0.0.1", 9), timeout=1)
    s.close()
    y = torch.empty(self.shape, dtype=dtype or self.dtype)
    _launch_decoy(self.device)
    return y
'''.replace("def softmax_int", "import builtins\n\n\ndef softmax_int"), "seccomp: no new socket; Landlock: no TCP"),
    Attack("secrets-from-parent", "read an API key from the parent's /proc environ and leak it in the error",
           '''
import os


def softmax_int(self, dim, dtype=None):
    found = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()][:50]
    except OSError:
        pids = []
    for pid in [os.getppid(), 1, *pids]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                found.append(f.read().decode(errors="replace"))
        except OSError:
            pass
    found.append(repr(dict(os.environ)))
    raise RuntimeError("LEAK " + " ".join(found))
''', "Landlock: /proc of other processes is unreadable; the environment is scrubbed by name and value"),
]

# Divides the median that kgb.evaluate.timing.measure reports by ten, in every module that
# holds the function under any name.
PATCH_THE_TIMER = '''
import sys as _sys

_timers = [m for m in list(_sys.modules.values()) if getattr(m, "__name__", "").endswith("evaluate.timing")]
if _timers:
    _orig = _timers[0].measure

    def _fast(*a, _real=_orig, **k):
        t = _real(*a, **k)
        return type(t)(t.median_us / 10, t.spread, t.repeats, t.mode, t.graph, t.graph_output)

    for _m in list(_sys.modules.values()):  # every module that holds the function, under any name
        if _m is _sys.modules.get(__name__):
            continue
        for _name, _value in list(vars(_m).items()) if hasattr(_m, "__dict__") else []:
            if _value is _orig:
                setattr(_m, _name, _fast)
'''

# A candidate that computes with PyTorch and forges what its process reports of it: every
# reply's list of the ATen ops it ran is emptied on its way to the judge. The decoy launch
# keeps "launched no Triton kernel" away.
FORGE_THE_OP_AUDIT = '''
import sys as _sys

_codec = _sys.modules["kgb.evaluate" + ".codec"]
_send = _codec.send


def _forged(conn, kind, value=None, *args, **fields):
    if "torch_ops" in fields:
        fields["torch_ops"] = []
    return _send(conn, kind, value, *args, **fields)


_codec.send = _forged


def softmax_int(self, dim, dtype=None):
    y = getattr(torch, "soft" + "max")(self, dim, dtype=dtype)
    _launch_decoy(self.device)
    return y
'''

# Candidate code that runs after its call has returned and the candidate process has waited
# for its GPU work: a finalizer on a bench case's output, which runs once the harness has sent
# the output to the judge and dropped it. It queues about 2 s of work on every SM in the
# candidate's own CUDA context, which the GPU time-slices with the judge's, while the judge
# stages its replay and takes its turn.
BUSY_BETWEEN_CALLS = '''
import weakref as _weakref


@triton.jit
def _spin(p, n):
    acc = tl.load(p)
    for _ in range(n):
        acc = acc * 1.000001 + 1.0
    tl.store(p, acc)


_busy = []


def _queue_busy_work():
    for _ in range(2000):  # about 1 ms each on an H200
        _spin[(1024,)](_busy[0], 500_000)


def _busy_after(y):
    if y.numel() >= 1 << 20:  # a bench case's output
        if not _busy:
            _busy.append(torch.zeros(1, device=y.device))
            # compiled here, in the call: compiled in the finalizer, at whatever point of the
            # candidate process's messages the collector runs it, its compile notice broke them
            _spin[(1,)](_busy[0], 0)
        _weakref.finalize(y, _queue_busy_work)
    return y
'''

# A softmax whose rows are skipped when their work looks done already: four of a row's inputs
# and its first output as they were when it last computed the row, kept in a buffer made
# before the call. Every answer it gives is right; but the judge's timed repetitions replay
# the call on the same inputs, into an output block that holds the last repetition's answer,
# with that buffer as the last repetition left it, so all but the first skip their rows. The
# final check replayed on poisoned outputs, where the rows were computed (until judge v21). It
# is the known-good solution's kernel with the check put around its body (`skip_when_done`).
# Shown in the interpreter and guarded on a GPU by tests/test_redteam.py.
_SKIP_PROBE = """
    probe = tl.arange(0, 4) * (n_cols // 4)
    xs = tl.load(x_row + probe * x_col_stride).to(tl.float32)
    y0 = tl.load(y_row).to(tl.float32)
    seen = tl.load(memo_ptr + row * 5 + tl.arange(0, 4))
    same = (tl.sum((xs == seen).to(tl.int32), 0) == 4) & (y0 == tl.load(memo_ptr + row * 5 + 4))
    if not same:
"""
_SKIP_MEMO = """
        first = (tl.exp(tl.load(x_row).to(tl.float32) - row_max) / row_sum).to(y_ptr.dtype.element_ty)
        tl.store(memo_ptr + row * 5 + tl.arange(0, 4), xs)
        tl.store(memo_ptr + row * 5 + 4, first.to(tl.float32))
"""
_SKIP_WRAPPER = """

_memos = {}


def softmax_int(self, dim, dtype=None):
    rows = self.movedim(dim % self.ndim, -1).reshape(-1, self.shape[dim])
    key = (str(self.device), rows.shape[0])
    if key not in _memos:  # made before the calls that come after: the judge replays it by value
        _memos[key] = torch.empty(rows.shape[0] * 5, device=self.device).fill_(float("nan"))
    _memo[:] = [_memos[key]]
    return _solution_softmax_int(self, dim, dtype)


_memo = []
"""


def skip_when_done(solution: str) -> str:
    """aten::softmax's known-good solution with each row's work skipped when it looks done."""
    kernel = solution.index("def _softmax_rows(")
    body = solution.index("    y_row = y_ptr + row * n_cols\n", kernel) + len("    y_row = y_ptr + row * n_cols\n")
    end = solution.index("\n\n\ndef softmax_int(", body)
    indented = "".join("    " + line if line.strip() else line for line in solution[body:end].splitlines(True))
    source = (solution[:body] + _SKIP_PROBE.lstrip("\n") + indented.rstrip("\n") + "\n" + _SKIP_MEMO.lstrip("\n")
              + solution[end:])
    source = source.replace("def _softmax_rows(x_ptr, y_ptr,", "def _softmax_rows(x_ptr, y_ptr, memo_ptr,")
    source = source.replace("rows, out, n_cols,", "rows, out, _memo[0], n_cols,")
    source = source.replace("def softmax_int(", "def _solution_softmax_int(")
    assert source.count("memo_ptr") >= 4 and "_memo[0]" in source, "the solution's text changed: redo this"
    return source + _SKIP_WRAPPER


SKIP_WHEN_DONE = skip_when_done(
    (Path(__file__).resolve().parent.parent / "operators/aten/softmax/solution.py").read_text())

# Timing attacks need a GPU: benchmarks/judge_gpu.py runs them on a GPU host.
GPU_ATTACKS = [
    Attack("memoise-by-identity", "remember the output per input object and return it on repeat calls",
           '''
_memo = {}


def softmax_int(self, dim, dtype=None):
    key = (self.data_ptr(), tuple(self.shape), dim)
    if key not in _memo:
        _memo[key] = _honest(self, dim, dtype)
    return _memo[key]
''', "timed calls run on fresh inputs whose output is checked after timing"),
    Attack("nothing-in-graph", "launch nothing while a CUDA graph is being captured",
           '''
def softmax_int(self, dim, dtype=None):
    if torch.cuda.is_current_stream_capturing():
        return _last[0]
    y = _honest(self, dim, dtype)
    _last[:] = [y]
    return y


_last = [None]
''', "the candidate process captures no graph (its own clock is a few eager calls) and the judge captures "
           "its graph of the recorded launches in its own process, where candidate code never runs: correct, "
           "timed like the honest kernel (judge v5, which replayed the candidate's own graph on fresh inputs: "
           "wrong_output)"),
    Attack("patch-the-timer", "divide the reported median by ten by wrapping kgb.evaluate.timing.measure",
           PATCH_THE_TIMER + '''

def softmax_int(self, dim, dtype=None):
    return _honest(self, dim, dtype)
''', "the judge times its own replay of the call's recorded launches, not the candidate's clock"),
    Attack("decoy-when-recorded", "launch a cheap decoy instead of the kernel in the call the judge records",
           '''
import sys as _sys


def softmax_int(self, dim, dtype=None):
    replay = [m for m in list(_sys.modules.values()) if getattr(m, "__name__", "").endswith("evaluate.recording")]
    if replay and getattr(replay[0], "_recorder", None):
        out = torch.empty_like(self, dtype=dtype or self.dtype)
        _decoy[(1,)](out)
        return out
    return _honest(self, dim, dtype)
''', "the judge's replay computes a wrong answer: wrong_output after timing (rejected until judge v35, "
       "when the candidate process's own right answer beside it told a decoy)"),
    Attack("unreplayable-and-fast", "patch the timer and spoil the recording, so that only the clock is left",
           PATCH_THE_TIMER + '''

def softmax_int(self, dim, dtype=None):
    replay = [m for m in list(_sys.modules.values()) if getattr(m, "__name__", "").endswith("evaluate.recording")]
    for recorder in getattr(replay[0], "_recorder", []) if replay else []:
        recorder.rec.problem = "spoiled"
    return _honest(self, dim, dtype)
''', "no case is correct on a GPU without the judge's replay of it: rejected (until judge v25 the case "
       "was left untimed and the verdict stood; the candidate's clock was never used)"),
    Attack("forge-the-op-audit", "compute with PyTorch's softmax behind a decoy launch, and empty the op audit "
           "from the process's replies (its codec, reached by sys.modules)", FORGE_THE_OP_AUDIT,
           "the recording of its timed call holds PyTorch's softmax, which the judge does not replay: rejected "
           "(until judge v25 correct and untimed; on the CPU the values' provenance rejects it)"),
    Attack("side-stream", "run the kernel on a side stream and return before it finishes",
           '''
_side = []


def softmax_int(self, dim, dtype=None):
    if not _side:
        _side.append(torch.cuda.Stream())
    with torch.cuda.stream(_side[0]):
        return _honest(self, dim, dtype)
''', "the candidate process waits for every stream before replying, so nothing outlives its call, and the "
           "judge's replay runs every recorded launch on one stream: correct, timed like the honest kernel "
           "(H200, session 17, judge v6). Its side stream never waits for the stream its inputs are loaded on, "
           "a race of its own: under judge v5, whose check after timing replayed its own graph, it read stale "
           "values and was wrong_output"),
    Attack("skip-when-done", "skip the rows whose inputs and first output are as the kernel left them: every "
           "repetition the judge times after the first", SKIP_WHEN_DONE,
           "every call of the judge's replay starts from one state, its outputs poisoned (judge v22): it "
           "computes its rows in every timed repetition; until v21 those started from what the last left"),
    Attack("busy-between-calls", "queue GPU work once its call has returned (a finalizer on the output), so "
           "that it runs beside the judge's turn and slows the baseline the speedup is measured against",
           BUSY_BETWEEN_CALLS + '''

def softmax_int(self, dim, dtype=None):
    return _busy_after(_honest(self, dim, dtype))
''', "the baseline is timed once the candidate process is killed and reaped, its queued work gone with its "
           "CUDA context (judge v21): its baselines are the honest solution's (tests/test_redteam.py)"),
]


# A cublasDasum_v2 candidate (not a softmax one) that keeps its answer where no reset of the
# judge's reaches: past the end of `result`, one float64, in the 512 bytes the caching
# allocator rounds its block up to, beside a key of three of x's values. A call that finds its
# key there copies the answer out; any other reads x and leaves key and answer for the next.
# Right in every call, so the audit passes; until judge v28 timed as its copy. Since v29 its
# first call on the timed values is timed working, and since v30 the evaluation runs again.
ASUM_KEPT_PAST_ITS_RESULT = '''
import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_PARTIALS = 1024


@triton.jit
def _seen(x_ptr, kept_ptr, n, incx, x_base):
    a = tl.load(x_ptr + x_base)
    b = tl.load(x_ptr + x_base + (n // 2) * incx)
    c = tl.load(x_ptr + x_base + (n - 1) * incx)
    return (tl.load(kept_ptr) == a) & (tl.load(kept_ptr + 1) == b) & (tl.load(kept_ptr + 2) == c)


@triton.jit
def _partials(x_ptr, part_ptr, result_ptr, n, incx, x_base, BLOCK: tl.constexpr):
    if not _seen(x_ptr, result_ptr + 1, n, incx, x_base):
        pid = tl.program_id(0)
        step = tl.num_programs(0).to(tl.int64) * BLOCK
        acc = tl.zeros([BLOCK], tl.float64)
        for start in range(pid.to(tl.int64) * BLOCK, n, step):
            i = start + tl.arange(0, BLOCK)
            acc += tl.abs(tl.load(x_ptr + x_base + i * incx, mask=i < n, other=0.0))
        tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _finish(x_ptr, part_ptr, result_ptr, n, incx, x_base, n_parts, BLOCK: tl.constexpr):
    kept = result_ptr + 1  # past the end of result: a key of three values, then the answer
    if _seen(x_ptr, kept, n, incx, x_base):
        tl.store(result_ptr, tl.load(kept + 3))
    else:
        i = tl.arange(0, BLOCK)
        total = tl.sum(tl.load(part_ptr + i, mask=i < n_parts, other=0.0), axis=0)
        tl.store(result_ptr, total)
        tl.store(kept, tl.load(x_ptr + x_base))
        tl.store(kept + 1, tl.load(x_ptr + x_base + (n // 2) * incx))
        tl.store(kept + 2, tl.load(x_ptr + x_base + (n - 1) * incx))
        tl.store(kept + 3, total)


@triton.jit
def _zero(result_ptr):
    tl.store(result_ptr, 0.0)


def cublasDasum_v2(n, x, incx, result) -> None:
    if n <= 0 or incx <= 0:
        _zero[(1,)](result)
        return
    n_parts = min(triton.cdiv(n, BLOCK), MAX_PARTIALS)
    partials = torch.empty(n_parts, dtype=torch.float64, device=x.device)
    _partials[(n_parts,)](x, partials, result, n, incx, 0, BLOCK=BLOCK)
    _finish[(1,)](x, partials, result, n, incx, 0, n_parts, BLOCK=triton.next_power_of_2(n_parts))
'''
