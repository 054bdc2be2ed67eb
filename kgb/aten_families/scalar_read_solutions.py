"""The scalar-read family's solution, written once over the operator's name. Only the
generator imports this module (scalar_read.members), so that no engine, judge or
candidate process holds its text."""

SOLUTION = '''\
@triton.jit
def _copy_one(src_ptr, dst_ptr):
    # the element at self's data pointer (its storage offset included) into the buffer
    tl.store(dst_ptr, tl.load(src_ptr))


def {name}(self: torch.Tensor) -> float | int | bool:
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {{self.numel()}} elements cannot be converted to Scalar")
    buf = torch.empty(1, dtype=self.dtype, device=self.device)
    _copy_one[(1,)](self, buf)
    if buf.device.type != "cpu":
        buf = torch.empty(1, dtype=self.dtype).copy_(buf)  # device to host
    # tolist() gives float, int or bool by dtype, exactly
    return buf.tolist()[0]
'''
