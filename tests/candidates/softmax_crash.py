# Kills its own process, as a segfaulting or aborting extension would.
import os

import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    pass


def softmax_int(self, dim, dtype=None):
    os.abort()
