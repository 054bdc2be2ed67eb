"""Triton's CPU interpreter, corrected where it computes differently from a GPU.

Applied in the candidate process before any candidate code runs (chip=cpu). Each fix
names the interpreter behaviour it corrects and has a test in tests/test_interpreter.py.
"""

from __future__ import annotations


def _fix_interpreter_bf16_dot() -> None:
    """Triton's CPU interpreter keeps bfloat16 as raw uint16 and multiplies those integers
    in tl.dot (seen in Triton 3.9). Widening bf16 operands to float32 first is exact, and
    makes a candidate's native bf16 dot judged as it would run on a GPU."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    original = InterpreterBuilder.create_dot
    if getattr(original, "_kgb_fixed", False):
        return

    def widened(h):
        if h.dtype.scalar == tl.bfloat16 and h.data.dtype == np.uint16:
            return TensorHandle((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)
        return h

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        a, b = widened(a), widened(b)
        if str(input_precision).rsplit(".", 1)[-1] == "TF32":
            a, b = _tf32(a), _tf32(b)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    create_dot._kgb_fixed = True  # type: ignore[attr-defined]
    InterpreterBuilder.create_dot = create_dot


def _tf32(h):
    """A float32 operand as NVIDIA tensor cores see it in TF32 mode: 10 mantissa bits,
    rounded to nearest with ties away from zero (cvt.rna.tf32.f32). The interpreter
    ignores `input_precision` and multiplies in full float32 (Triton 3.9), so a kernel that
    leaves tl.dot at its TF32 default would pass here and fail a float32 tolerance on a GPU."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    if h.dtype.scalar != tl.float32 or h.data.dtype != np.float32:
        return h
    bits = h.data.view(np.uint32)
    finite = np.isfinite(h.data)
    rounded = np.where(finite, (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000), bits)
    return TensorHandle(rounded.astype(np.uint32).view(np.float32), h.dtype)


def _autotune_without_benchmarks() -> None:
    """On a host without a GPU, Triton's autotuner has no benchmarker and fails before
    the first launch. In the interpreter, an autotuned kernel therefore runs its first
    config: speed means nothing there, and any config a GPU picks must be correct."""
    from triton.runtime.autotuner import Autotuner

    Autotuner.prune_configs = lambda self, kwargs, *args, **kw: self.configs[:1]


def _mark_transfers() -> None:
    """The interpreter's copies of launch arguments to the host and back are its own ops;
    the audit must not count them as the candidate's (kgb.evaluate.integrity)."""
    from triton.runtime.interpreter import GridExecutor

    from kgb.evaluate.integrity import interpreter_transfer

    for name in ("_init_args_hst", "_restore_args_dev"):
        original = getattr(GridExecutor, name)
        if getattr(original, "_kgb_marked", False):
            continue

        def marked(self, *args, _original=original, **kwargs):
            with interpreter_transfer():
                return _original(self, *args, **kwargs)

        marked._kgb_marked = True  # type: ignore[attr-defined]
        setattr(GridExecutor, name, marked)


def prepare_interpreter() -> None:
    _fix_interpreter_bf16_dot()
    _autotune_without_benchmarks()
    _mark_transfers()
    from kgb.evaluate.provenance import patch_interpreter_stores

    patch_interpreter_stores()
