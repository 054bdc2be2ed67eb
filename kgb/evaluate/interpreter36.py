"""Triton 3.6's CPU interpreter under NumPy >= 2, where it fails and Triton 3.9's runs.

NumPy 2 refuses what NumPy 1 let by: int() of a one-element 1-d array (NumPy 2.4) and a
Python int out of an unsigned dtype's range (NumPy 2.0). Triton 3.6's interpreter relies on
both, so a candidate that a GPU runs failed on the CPU; each fix here does what Triton 3.9
does instead, through the interpreter's own hooks, and changes nothing under 3.9. Applied
by kgb.evaluate.interpreter.prepare_interpreter. The CPU tests run Triton 3.9, where these
cannot fail: they show only with Triton 3.6 installed.
"""

from __future__ import annotations


def _fix_scalar_index() -> None:
    """The interpreter holds a scalar as a one-element 1-d array, and Triton 3.6's
    `tl.tensor.__index__` is int(array), which NumPy >= 2.4 refuses ("only 0-dimensional
    arrays can be converted to Python scalars"): `range(0, n, BLOCK)` over an int argument
    failed. Triton 3.9 squeezes the array first (triton-lang/triton#9172)."""
    import numpy as np
    from triton.runtime import interpreter as itp

    original = itp._patch_lang_tensor
    if getattr(original, "_kgb_fixed", False):
        return

    def index(self):
        return int(np.asarray(self.handle.data).squeeze())

    def _patch_lang_tensor(tensor, *scope):
        original(tensor, *scope)
        if scope:  # Triton 3.6 and 3.9 undo their patches after each launch
            scope[0].set_attr(tensor, "__index__", index)
        else:  # Triton 3.2 patches tl.tensor for good
            tensor.__index__ = index

    _patch_lang_tensor._kgb_fixed = True  # type: ignore[attr-defined]
    itp._patch_lang_tensor = _patch_lang_tensor


def _fix_unsigned_all_ones() -> None:
    """`~x` xors x with the builder's all-ones value, which Triton 3.6 makes as
    np.full(1, -1, dtype) for every integer dtype: NumPy >= 2 refuses -1 as an unsigned
    integer (OverflowError), so `~x` on uint8 failed. Triton 3.9 takes the dtype's maximum."""
    import numpy as np
    from triton.runtime import interpreter as itp

    builder = itp.InterpreterBuilder
    original = getattr(builder, "get_all_ones_value", None)
    if original is None or getattr(original, "_kgb_fixed", False):
        return

    def get_all_ones_value(self, type):
        np_type = np.dtype(itp._get_np_dtype(type))
        if np.issubdtype(np_type, np.unsignedinteger):
            return itp.TensorHandle(np.full(1, np.iinfo(np_type).max, dtype=np_type), type.scalar)
        return original(self, type)

    get_all_ones_value._kgb_fixed = True  # type: ignore[attr-defined]
    builder.get_all_ones_value = get_all_ones_value


def fix_triton36_under_numpy2() -> None:
    _fix_scalar_index()
    _fix_unsigned_all_ones()
