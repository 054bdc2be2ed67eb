"""The references' first-use compiles, done before their work sections (kgb.evaluate.first_use,
judge v37): where they are tried, once per signature, and on a GPU that a captured call compiles
its kernels and runs nothing."""

import contextlib
import os
import subprocess
import sys

import pytest
import torch

from kgb.evaluate import first_use
from kgb.evaluate.first_use import FirstUse, signature


def test_nothing_is_captured_on_the_cpu_or_for_a_spec_that_draws_random_numbers(monkeypatch):
    tried = []
    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side=None: tried.append(call) or True)
    for device, random in (("cpu", False), ("cuda", True)):
        FirstUse(device, random).ready("f", torch.neg, (torch.ones(3),), {})
    assert tried == []


def test_each_signature_is_captured_once_and_large_inputs_not_at_all(monkeypatch):
    tried = []
    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side=None: tried.append(call) or True)
    uses = FirstUse("cuda", random=False)
    x = torch.ones(4, 5)
    uses.ready("f", torch.polygamma, (3, x), {})
    uses.ready("f", torch.polygamma, (3, x + 1), {})  # the same dtypes, layout and order
    uses.ready("f", torch.polygamma, (2, x), {})  # another order: another kernel, maybe
    uses.ready("f", torch.polygamma, (3, x.t()), {})  # not contiguous
    uses.ready("f", torch.polygamma, (3, x.half()), {})
    big = torch.empty(first_use.MAX_INPUT_BYTES // 4 + 1)
    uses.ready("f", torch.neg, (big,), {})
    assert len(tried) == uses.captured == 4


def test_a_reference_given_a_sparse_tensor_is_not_captured(monkeypatch):
    """A sparse tensor has neither the storage a capture's inputs are sized by nor the strides
    a signature is keyed by: its case runs as it did before judge v37."""
    tried = []
    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side=None: tried.append(call) or True)
    uses = FirstUse("cuda", random=False)
    uses.ready("f", torch.sparse.sum, (torch.eye(3).to_sparse(),), {})
    uses.ready("f", torch.neg, (torch.ones(3),), {})
    assert len(tried) == uses.captured == 1


@pytest.mark.parametrize("breaks", [False, True])
def test_a_capture_that_breaks_puts_the_default_generator_back(monkeypatch, breaks):
    """PyTorch leaves the default CUDA generator in its capture mode after a capture that broke,
    where the judge's next draw from it raised (session 67, an H100): its state from before is
    put back. The GPU test below draws after a broken capture; this one runs without a GPU."""
    restored = []

    class Generator:
        def clone_state(self):
            return "before"

        def graphsafe_set_state(self, state):
            restored.append(state)

    class Graph:
        def capture_begin(self, capture_error_mode):
            pass

        def capture_end(self):
            if breaks:
                raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(torch.cuda, "CUDAGraph", Graph)
    monkeypatch.setattr(torch.cuda, "default_generators", (Generator(),))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    assert first_use.compiled_beforehand(lambda: None, side=lambda: None) is not breaks
    assert restored == (["before"] if breaks else [])

    # a PyTorch whose generator cannot hand its state over: nothing is captured at all
    called = []
    monkeypatch.setattr(torch.cuda, "default_generators", (object(),))
    assert not first_use.compiled_beforehand(lambda: called.append(1), side=lambda: None)
    assert called == []


def test_only_a_capture_holds_the_gate_it_is_given(monkeypatch):
    """The judge gives the GPU's quiet gate: a capture allocates and loads outside any section."""
    held = []

    @contextlib.contextmanager
    def gate():
        held.append("in")
        yield
        held.append("out")

    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side=None: held.append("capture") or True)
    uses = FirstUse("cuda", random=False, changing=gate)
    x = torch.ones(3)
    uses.ready("f", torch.neg, (x,), {})
    uses.ready("f", torch.neg, (x + 1,), {})  # seen: no capture, no gate
    assert held == ["in", "capture", "out"]


def test_a_judge_captures_on_one_stream(monkeypatch):
    """PyTorch keeps a cuBLAS workspace for each stream a cuBLAS call ran on: a stream per
    capture would leave one behind for each."""
    made, given = [], []
    monkeypatch.setattr(torch.cuda, "Stream", lambda: made.append(object()) or made[-1])
    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side: given.append(side()) or True)
    uses = FirstUse("cuda", random=False)
    for x in (torch.ones(3), torch.ones(3, 2), torch.ones(4).half()):
        uses.ready("f", torch.neg, (x,), {})
    assert len(made) == 1 and given == made * 3


def test_the_captured_call_sees_views_of_the_inputs(monkeypatch):
    """A capture runs the call's host side whole: a reference that reshapes a tensor in place
    reshapes a view, and the inputs the real call then gets are as they were."""
    monkeypatch.setattr(first_use, "compiled_beforehand", lambda call, side=None: call() is not None)
    x = torch.ones(6)
    FirstUse("cuda", random=False).ready("f", lambda t: t.unsqueeze_(0), (x,), {})
    assert x.shape == (6,)


def test_signatures_tell_dtypes_layouts_and_values_apart():
    x = torch.ones(2, 3)
    assert signature((x,), {}) == signature((torch.zeros(2, 3),), {})
    assert signature((x,), {}) != signature((x.t(),), {})
    assert signature((x,), {"n": 1}) != signature((x,), {"n": 2})
    assert signature(([x, x],), {}) != signature(([x],), {})


def test_layouts_that_take_different_elementwise_kernels_have_different_signatures():
    """Session 66: a transposed and a broadcast case of i0 shared a key, and the second compiled
    its kernel inside its work section."""
    x = torch.ones(64, 1000)
    kinds = {
        "contiguous": x, "transposed": torch.ones(1000, 64).t(), "strided": torch.ones(64, 2000)[:, ::2],
        "expanded": torch.ones(1, 1000).expand(64, 1000), "one element in": torch.ones(64 * 1000 + 1)[1:].view(64, 1000),
    }
    assert [first_use.layout(t) for t in kinds.values()] == ["contiguous", "dense", "gapped", "broadcast", "contiguous"]
    assert len({signature((t,), {}) for t in kinds.values()}) == len(kinds)
    assert first_use.alignment(kinds["one element in"]) == 4
    # size-1 dimensions take any stride and change nothing
    assert first_use.layout(torch.ones(5, 1, 3).transpose(0, 1)) == "contiguous"
    assert first_use.layout(torch.ones(3, 1, 5).permute(2, 1, 0)) == "dense"


GPU_SCRIPT = r"""
import time, torch
from kgb.evaluate.first_use import compiled_beforehand
x = torch.rand(1 << 20, device="cuda") + 0.5
torch.cuda.synchronize()
out = []
assert compiled_beforehand(lambda: out.append(torch.polygamma(3, x)))
torch.cuda.synchronize()
began = time.perf_counter()
y = torch.polygamma(3, x)
torch.cuda.synchronize()
first = time.perf_counter() - began
assert torch.allclose(y.cpu(), torch.polygamma(3, x.cpu()), rtol=1e-4)
assert not compiled_beforehand(lambda: x.sum().item())  # it waits for the device: not capturable
z = torch.special.i0(x)  # the stream is usable after a capture that failed
torch.rand(8, device="cuda")  # and the default generator: a broken capture left it capturing
torch.cuda.synchronize()
print(f"first real call after the capture {first:.4f} s")
assert first < 0.2, first

# session 66: a transposed check case and then an expanded one of the same dtype and rank; the
# second runs an indexed kernel of its own, which its own capture must compile
from kgb.evaluate.first_use import FirstUse
uses = FirstUse("cuda", random=False)
transposed = torch.rand(1000, 64, device="cuda").t()
expanded = torch.rand(1, 1000, device="cuda").expand(64, 1000)
for t in (transposed, expanded):
    uses.ready("i0", torch.special.i0, (t,), {})
assert uses.captured == 2, uses.captured
torch.cuda.synchronize()
began = time.perf_counter()
e = torch.special.i0(expanded)
torch.cuda.synchronize()
first = time.perf_counter() - began
assert torch.allclose(e.cpu(), torch.special.i0(expanded.cpu()), rtol=1e-5)
print(f"first real call on the expanded case after its capture {first:.4f} s")
assert first < 0.2, first
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_a_captured_reference_compiles_its_kernels_and_runs_nothing(tmp_path):
    """polygamma's kernel is written and compiled at its first use (PyTorch's jiterator); after
    the capture, the first real call finds it, and a call that cannot be captured leaves the
    stream as it was. A fresh process, with a kernel cache of its own: no earlier compile helps."""
    env = {**os.environ, "PYTORCH_KERNEL_CACHE_PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", GPU_SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
