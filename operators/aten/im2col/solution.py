import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _im2col_kernel(x, out, n, C, H, W, KH, KW, OH, OW, sn, sc, sh, sw,
                   stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, BLOCK: tl.constexpr):
    # out is contiguous (N, C*KH*KW, OH*OW): its flat index splits as (n, c, ki, kj, oh, ow).
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    ow = i % OW
    t = i // OW
    oh = t % OH
    t = t // OH
    kj = t % KW
    t = t // KW
    ki = t % KH
    t = t // KH
    c = t % C
    b = t // C
    h = oh * stride_h - pad_h + ki * dil_h
    w = ow * stride_w - pad_w + kj * dil_w
    inside = (h >= 0) & (h < H) & (w >= 0) & (w < W)
    v = tl.load(x + b * sn + c * sc + h * sh + w * sw, mask=m & inside, other=0)
    tl.store(out + i, v, mask=m)


def im2col(self: torch.Tensor, kernel_size: list, dilation: list, padding: list, stride: list) -> torch.Tensor:
    batched = self.ndim == 4
    x = self if batched else self.unsqueeze(0)
    N, C, H, W = x.shape
    kh, kw = kernel_size
    dh, dw = dilation
    ph, pw = padding
    sh, sw = stride
    oh = (H + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    ow = (W + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError("im2col: the kernel does not fit in the padded input")
    out = torch.empty((N, C * kh * kw, oh * ow), dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _im2col_kernel[(triton.cdiv(n, BLOCK),)](
            x, out, n, C, H, W, kh, kw, oh, ow, *x.stride(), sh, sw, ph, pw, dh, dw, BLOCK=BLOCK
        )
    return out if batched else out.squeeze(0)
