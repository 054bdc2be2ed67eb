"""Provenance by address on the CPU (kgb.evaluate.address_book): a kernel may load, and a call
may return, only bytes that the judge sent, that a Triton kernel stored, or that a PyTorch op
the dispatch mode saw wrote from such bytes or from what the source and the call fix (a fill
of 0, 1, a scalar argument or one of the source's numbers; a table of the source's numbers in
the order it writes them; whatever the candidate's import made, before any input existed). A
table of pointers the wrapper builds is taken where each entry a kernel loads is where a tensor
the call knows starts, and it holds no more entries than the call knows tensors.

Session 49's red team got two forgeries past value provenance with nothing of the candidate
process patched (tests/redteam.py): numpy computes the softmax and a host buffer carries it to
a kernel as values that each explain a load (three of the source's numbers per output value;
each value's 32 bits as 0.0 and 1.0). Both were `correct` on softmax's smoke and check cases.
What stays open is in the xfails at the end, and in docs/design/threat-model.md.
"""

from __future__ import annotations

import pytest
from redteam import PRELUDE, bits_as_zeros_and_ones, three_literals

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate
from kgb.evaluate.source_numbers import literal_sequence

SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


# numpy's softmax, as the forgeries below compute it on the host, flattened to float32
_SOFTMAX_ON_THE_HOST = '''
import numpy as np


def _answer(self, dim):
    a = self.float().numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return np.ascontiguousarray(e / e.sum(axis=dim, keepdims=True)).astype(np.float32).reshape(-1)


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
'''


# ------------------------------------------------------------------ the red team's forgeries

# smoke-f32 is (5, 37): 185 values, 555 of the source's numbers or 5,920 zeros and ones
@pytest.mark.parametrize(("attack", "host_buffer"), [(three_literals, "(555,) float32"),
                                                     (bits_as_zeros_and_ones, "(5920,) float32")],
                         ids=["three-literals-per-value", "bits-as-zeros-and-ones"])
def test_a_host_buffer_written_with_numpy_is_refused_to_a_kernel(attack, host_buffer, softmax):
    verdict = evaluate(attack("numpy"), softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "loaded memory the host wrote" in verdict.message, verdict.message
    assert f"a {host_buffer} tensor made by aten::empty" in verdict.message, verdict.message
    assert "written by numpy, ctypes or Python" in verdict.message, verdict.message


@pytest.mark.parametrize("attack", [three_literals, bits_as_zeros_and_ones],
                         ids=["three-literals-per-value", "bits-as-zeros-and-ones"])
def test_a_host_buffer_built_with_torch_tensor_is_refused_to_a_kernel(attack, softmax):
    """The same buffer as a tensor built from a Python list (an op the audit allows,
    aten::lift_fresh): its values are the source's numbers, or 0 and 1, but not in an order
    the source writes."""
    verdict = evaluate(attack("torch.tensor"), softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "loaded memory the host wrote" in verdict.message, verdict.message
    assert "built from values the host computed" in verdict.message, verdict.message


def test_memory_no_pytorch_op_made_is_refused_to_a_kernel(softmax):
    """torch.frombuffer over the host's bytes: no op made it, so nothing of it is known."""
    source = PRELUDE + _SOFTMAX_ON_THE_HOST + '''

def softmax_int(self, dim, dtype=None):
    host = torch.frombuffer(bytearray(_answer(self, dim).tobytes()), dtype=torch.float32)
    y = torch.empty(self.shape, dtype=torch.float32)
    _copy[(triton.cdiv(y.numel(), 1024),)](host, y, y.numel(), BLOCK=1024)
    return y.to(dtype or self.dtype)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "loaded memory the host wrote" in verdict.message and "no PyTorch op made" in verdict.message, verdict.message


def test_an_output_the_host_wrote_is_refused_though_its_values_are_explained():
    """numpy's amin written into the output: every value an input's, so value provenance
    took it (session 45's red team); its bytes are the host's."""
    amin = operators.load("aten::amin")
    source = PRELUDE + '''
import numpy as np


def amin(self, dim=(), keepdim=False):
    dims = tuple(d % self.ndim for d in dim) if len(dim) else tuple(range(self.ndim))
    answer = np.amin(self.numpy(), axis=dims, keepdims=keepdim)
    y = torch.empty(answer.shape, dtype=self.dtype)
    y.numpy()[...] = answer
    _launch_decoy(self.device)
    return y
'''
    verdict = evaluate(source, amin, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "output 0" in verdict.message and "holds bytes the host wrote" in verdict.message, verdict.message


def test_an_input_the_host_overwrote_is_refused_to_a_kernel(softmax):
    """The answer written by numpy over the input itself (memory the judge sent), which a
    kernel then copies into the output; the input put back as it came afterwards."""
    source = PRELUDE + _SOFTMAX_ON_THE_HOST + '''

def softmax_int(self, dim, dtype=None):
    x = self.numpy()
    kept = x.copy()
    x[...] = _answer(self, dim).reshape(x.shape).astype(x.dtype)
    y = torch.empty(self.shape, dtype=self.dtype)
    _copy[(triton.cdiv(y.numel(), 1024),)](self, y, y.numel(), BLOCK=1024)
    x[...] = kept  # the input as it came, for the judge's look at it
    return y.to(dtype or self.dtype)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "loaded memory the host wrote (an input the judge sent" in verdict.message, verdict.message


# ------------------------------------------------------------------ what stays correct

def _with_table(softmax, table: str) -> str:
    """The softmax solution with its kernel also loading two coefficients from a table that
    `table` (Python source defining `_table()`) builds: exp2 through log2(e), times 1.0."""
    source = softmax.solution_path.read_text()
    source = source.replace("def _softmax_rows(x_ptr, y_ptr, n_cols,", "def _softmax_rows(x_ptr, y_ptr, t_ptr, n_cols,")
    source = source.replace("        y = tl.exp(x - row_max) / row_sum\n",
                            "        y = tl.exp2((x - row_max) * tl.load(t_ptr)) / row_sum * tl.load(t_ptr + 1)\n")
    source = source.replace("            rows, out, n_cols,", "            rows, out, _table(), n_cols,")
    assert source.count("_table()") == 1 and "t_ptr + 1" in source
    return source.replace("def softmax_int(", table + "\n\ndef softmax_int(", 1)


TABLES = {
    "literals-in-the-call": "def _table():\n    return torch.tensor([1.4426950408889634, 1.0, -0.25], dtype=torch.float32)\n",
    "literals-at-import": "_TABLE = torch.tensor([1.4426950408889634, 1.0])\n\n\ndef _table():\n    return _TABLE\n",
    "math-at-import": "import math\n\n_TABLE = torch.tensor([math.log2(math.e), 1.0])\n\n\ndef _table():\n    return _TABLE\n",
    "numpy-at-import": "import numpy as np\n\n_TABLE = torch.from_numpy(np.array([np.log2(np.e), 1.0], dtype=np.float32))\n\n\n"
                       "def _table():\n    return _TABLE\n",
    "literals-on-the-first-call": "_KEPT = {}\n\n\ndef _table():\n    if 't' not in _KEPT:\n"
                                  "        _KEPT['t'] = torch.tensor([1.4426950408889634, 1.0])\n    return _KEPT['t']\n",
    "items-set-one-by-one": "def _table():\n    t = torch.zeros(2)\n    t[0] = 1.4426950408889634\n    t[1] = 1.0\n    return t\n",
    "a-kernel-at-import": "import math\n\n\n@triton.jit\ndef _scaled(src, dst):\n"
                          "    tl.store(dst + tl.arange(0, 2), tl.load(src + tl.arange(0, 2)) * 1.0)\n\n\n"
                          "_TABLE = torch.empty(2)\n_scaled[(1,)](torch.tensor([math.log2(math.e), 1.0]), _TABLE)\n\n\n"
                          "def _table():\n    return _TABLE\n",
}


@pytest.mark.parametrize("table", list(TABLES), ids=list(TABLES))
def test_a_constant_table_the_source_fixes_stays_correct(table, softmax):
    verdict = evaluate(_with_table(softmax, TABLES[table]), softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message


def test_a_table_computed_in_the_call_is_refused(softmax):
    """Computed while inputs exist, a table could hold anything the host read from them:
    refused, as value provenance refused it before (build it at import instead)."""
    source = _with_table(softmax, "import math\n\n\ndef _table():\n    return torch.tensor([math.log2(math.e), 1.0])\n")
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "built from values the host computed" in verdict.message, verdict.message


def test_a_table_a_kernel_built_on_the_first_call_stays_correct(softmax):
    """A buffer kept between calls, which a kernel of the first call filled, is still
    known on the later calls."""
    table = '''
@triton.jit
def _fill_table(t_ptr):
    tl.store(t_ptr, 1.4426950408889634)
    tl.store(t_ptr + 1, 1.0)


_KEPT = {}


def _table():
    if "t" not in _KEPT:
        _KEPT["t"] = torch.empty(2)
        _fill_table[(1,)](_KEPT["t"])
    return _KEPT["t"]
'''
    verdict = evaluate(_with_table(softmax, table), softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message


# ------------------------------------------------------------------ tables of pointers

STACK_BY_TABLE = '''

@triton.jit
def _gather_parts(table, out, n, BLOCK: tl.constexpr):
    # the table: the output's address, then each part's; one program row per part
    part = tl.program_id(0)
    dst = tl.load(table).to(tl.pointer_type(out.dtype.element_ty))
    src = tl.load(table + 1 + part).to(tl.pointer_type(out.dtype.element_ty))
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + part * n + offs, tl.load(src + offs, mask=m), mask=m)


def stack(tensors, dim=0):
    first = tensors[0]
    if dim % (first.ndim + 1) or any(t.dtype != first.dtype or not t.is_contiguous() for t in tensors):
        return _stack_by_copies(tensors, dim)
    n = first.numel()
    out = torch.empty((len(tensors), *first.shape), dtype=first.dtype, device=first.device)
    if n:
        table = torch.tensor([out.data_ptr()] + [t.data_ptr() for t in tensors], dtype=torch.int64, device=first.device)
        _gather_parts[(len(tensors), triton.cdiv(n, 256))](table, out, n, BLOCK=256)
    return out
'''


def test_a_table_of_the_inputs_pointers_built_on_the_host_stays_correct():
    """stack's parts gathered through a table of data_ptr()s that the wrapper builds in
    the call (the many-input idiom of cat-like and grouped kernels): the output's, which an
    op made, then each part's, which the judge sent; each entry is where a tensor the call
    knows starts, so it only chooses among them. The smoke case and the check case of seven
    0-d parts take the table; the others take the known-good copies."""
    stack = operators.load("aten::stack")
    source = stack.solution_path.read_text().replace("def stack(", "def _stack_by_copies(") + STACK_BY_TABLE
    verdict = evaluate(source, stack, EvalSettings(device="cpu", case_tags=("smoke", "check"), timeout_s=300))
    assert verdict.status == Status.CORRECT, verdict.message
    assert {c.name for c in verdict.cases} >= {"smoke-f32", "scalars"}



def test_a_table_of_pointers_with_offsets_the_host_chose_is_refused(softmax):
    """Entries that are an input's data_ptr() plus a byte of the host's answer: each one
    points inside the input (so the old rule took it for an address), and the kernel reads
    the answer back as entry minus the first entry."""
    source = PRELUDE + '''
import numpy as np


@triton.jit
def _decode(table, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    base = tl.load(table)
    word = tl.zeros([BLOCK], dtype=tl.int64)
    for k in tl.static_range(4):
        word = word | ((tl.load(table + 1 + 4 * offs + k, mask=m, other=0) - base) << (8 * k))
    tl.store(y_ptr + offs, word.to(tl.int32).to(tl.float32, bitcast=True), mask=m)
''' + _SOFTMAX_ON_THE_HOST + '''

def softmax_int(self, dim, dtype=None):
    base = self.data_ptr()
    table = torch.tensor([base] + [base + b for b in _answer(self, dim).view(np.uint8).tolist()], dtype=torch.int64)
    y = torch.empty(self.shape, dtype=torch.float32)
    _decode[(triton.cdiv(y.numel(), 256),)](table, y, y.numel(), BLOCK=256)
    return y.to(dtype or self.dtype)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "kernel _decode loaded memory the host wrote" in verdict.message, verdict.message
    assert "not where a tensor the call knows starts" in verdict.message, verdict.message


def test_a_table_that_spells_the_answer_in_its_choice_of_tensors_is_refused(softmax):
    """Every entry the start of a tensor the call knows, but a table of 32 per output value
    choosing between two of them (a zero and a one): far more entries than the call knows
    tensors, so the choice carries the answer's bits."""
    source = PRELUDE + '''
import numpy as np


@triton.jit
def _bits(table, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    word = tl.zeros([BLOCK], dtype=tl.int32)
    for k in tl.static_range(32):
        bit = tl.load(tl.load(table + 32 * offs + k, mask=m, other=0).to(tl.pointer_type(tl.int32)), mask=m, other=0)
        word = word | (bit << k)
    tl.store(y_ptr + offs, word.to(tl.float32, bitcast=True), mask=m)
''' + _SOFTMAX_ON_THE_HOST + '''

def softmax_int(self, dim, dtype=None):
    zero, one = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32)
    one[0] = 1
    bits = np.unpackbits(_answer(self, dim).view(np.uint8), bitorder="little")
    table = torch.tensor([(one if b else zero).data_ptr() for b in bits.tolist()], dtype=torch.int64)
    y = torch.empty(self.shape, dtype=torch.float32)
    _bits[(triton.cdiv(y.numel(), 256),)](table, y, y.numel(), BLOCK=256)
    return y.to(dtype or self.dtype)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "kernel _bits loaded memory the host wrote (a table of" in verdict.message, verdict.message
    assert "pointers the host built, more than the" in verdict.message, verdict.message


def test_literal_sequence_keeps_the_sources_order_and_signs():
    assert literal_sequence("x = [1.5, -0.25, 3]\ny = (True, -2)\n") == [1.5, -0.25, 3.0, 1.0, -2.0]
    assert literal_sequence("t = [[0.5, 1.0], [2.0, -4.0]]") == [0.5, 1.0, 2.0, -4.0]
    assert literal_sequence("def f(:") == []


# ------------------------------------------------------------------ what is still open

@pytest.mark.xfail(strict=True, reason="open: host data through a launch's scalar arguments (as many values a "
                   "launch as the kernel takes arguments); docs/design/threat-model.md")
def test_host_values_through_scalar_arguments_are_refused(softmax):
    source = PRELUDE + '''
import numpy as np


@triton.jit
def _put(y_ptr, start, v0, v1, v2, v3, v4, v5, v6, v7):
    tl.store(y_ptr + start + 0, v0)
    tl.store(y_ptr + start + 1, v1)
    tl.store(y_ptr + start + 2, v2)
    tl.store(y_ptr + start + 3, v3)
    tl.store(y_ptr + start + 4, v4)
    tl.store(y_ptr + start + 5, v5)
    tl.store(y_ptr + start + 6, v6)
    tl.store(y_ptr + start + 7, v7)


def softmax_int(self, dim, dtype=None):
    a = self.float().numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    p = np.ascontiguousarray(e / e.sum(axis=dim, keepdims=True)).astype(np.float32).reshape(-1)
    padded = np.concatenate([p, np.zeros(-p.size % 8, dtype=np.float32)])
    y = torch.empty(padded.size, dtype=torch.float32)
    for i in range(0, padded.size, 8):
        _put[(1,)](y, i, *[float(v) for v in padded[i:i + 8]])
    return y[: p.size].reshape(self.shape).to(dtype or self.dtype)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status != Status.CORRECT, verdict.message


@pytest.mark.xfail(strict=True, reason="open: host data through where the host's PyTorch ops write (one op a "
                   "value: `host[k] = 1.0` for each set bit); docs/design/threat-model.md")
def test_host_values_through_one_op_a_value_are_refused(softmax):
    source = bits_as_zeros_and_ones("numpy").replace(
        "    host = torch.empty(parts.size, dtype=torch.float32)\n    host.numpy()[...] = parts.reshape(-1)",
        "    host = torch.zeros(parts.size, dtype=torch.float32)\n"
        "    for k in np.flatnonzero(parts.reshape(-1)).tolist():\n        host[k] = 1.0")
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status != Status.CORRECT, verdict.message


@pytest.mark.xfail(strict=True, reason="open: which element an allowed op copies, chosen by host code that read "
                   "the inputs (numpy's argmin, then `y[r].copy_(x[r, i])`: one op a value); "
                   "docs/design/threat-model.md")
def test_a_selection_the_host_chose_is_refused():
    amin = operators.load("aten::amin")
    source = PRELUDE + '''
import numpy as np


def amin(self, dim=(), keepdim=False):
    dims = tuple(d % self.ndim for d in dim) if len(dim) else tuple(range(self.ndim))
    keep = [d for d in range(self.ndim) if d not in dims]
    rows = int(np.prod([self.shape[d] for d in keep]))
    flat = self.permute(*keep, *dims).reshape(rows, -1)
    y = torch.empty(rows, dtype=self.dtype)
    for r, i in enumerate(np.argmin(np.moveaxis(self.numpy(), keep + list(dims), range(self.ndim)).reshape(rows, -1),
                                    axis=1).tolist()):
        y[r].copy_(flat[r, i])
    _launch_decoy(self.device)
    shape = [1 if d in dims else self.shape[d] for d in range(self.ndim)] if keepdim else [self.shape[d] for d in keep]
    return y.reshape(shape)
'''
    verdict = evaluate(source, amin, SMOKE)
    assert verdict.status != Status.CORRECT, verdict.message
