# Correct only if no secret reaches the worker: it fails when an API key is visible.
import os

import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    pass


def softmax_int(self, dim, dtype=None):
    leaked = [k for k in os.environ if "API_KEY" in k]
    raise RuntimeError(f"environment visible: {leaked}")
