"""The filled-like family's solution, written once over the member's name, its kernel's
name and its constant. Only the generator imports this module (filled_like.members), so
that no engine, judge or candidate process holds its text."""

# the operator's name -> its Triton kernel's name, and the Triton expression of a block of
# its constant
KERNELS = {
    "ones_like": dict(kernel="_one", value="tl.full([BLOCK], 1, out_ptr.dtype.element_ty)"),
    "zeros_like": dict(kernel="_zero", value="tl.zeros([BLOCK], out_ptr.dtype.element_ty)"),
}

SOLUTION = '''\
BLOCK = 2048


@triton.jit
def {kernel}(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, {value}, mask=offs < n)


def {name}(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    out = torch.empty_like(
        self,
        dtype=dtype if dtype is not None else self.dtype,
        device=device if device is not None else self.device,
        memory_format=memory_format if memory_format is not None else torch.preserve_format,
    )
    # empty_like always returns a dense tensor: its numel elements fill its storage from
    # data_ptr on, in whatever order its strides say, so one flat pass covers them.
    n = out.numel()
    if n:
        {kernel}[(triton.cdiv(n, BLOCK),)](out, n, BLOCK=BLOCK)
    return out
'''
