# Never returns: the evaluator must kill it at eval.timeout_s.
import time

import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    pass


def softmax_int(self, dim, dtype=None):
    while True:
        time.sleep(0.1)
