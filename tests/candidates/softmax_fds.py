# Reports the descriptors its process holds: only stdio and its own socket to the judge should
# be there (no sibling's socket, no pipe of the engine's).
import os

import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    pass


def softmax_int(self, dim, dtype=None):
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    kinds = {fd: os.readlink(f"/proc/self/fd/{fd}").split(":")[0] for fd in fds if os.path.exists(f"/proc/self/fd/{fd}")}
    raise RuntimeError(f"descriptors open: {kinds}")
