import triton
import triton.language as tl


@triton.jit
def _rope_kernel(
    pos_ptr, x_ptr, cache_ptr, n_heads, token_stride, head_stride, rot_dim,
    IS_NEOX: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_R: tl.constexpr,
):
    # One program per (token, block of heads): every head of the block uses the token's
    # cos/sin row. Each pair is read completely before it is written, so in place is safe.
    token = tl.program_id(0).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    half = rot_dim // 2
    i = tl.arange(0, BLOCK_R)
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cache_ptr + pos * rot_dim + i, mask=i < half, other=0.0).to(tl.float32)
    sin = tl.load(cache_ptr + pos * rot_dim + half + i, mask=i < half, other=0.0).to(tl.float32)
    base = x_ptr + token * token_stride + heads.to(tl.int64)[:, None] * head_stride
    if IS_NEOX:
        x_off = i[None, :]
        y_off = x_off + half
    else:
        x_off = 2 * i[None, :]
        y_off = x_off + 1
    mask = (heads < n_heads)[:, None] & (i < half)[None, :]
    x = tl.load(base + x_off, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(base + y_off, mask=mask, other=0.0).to(tl.float32)
    new_x = x * cos[None, :] - y * sin[None, :]
    new_y = y * cos[None, :] + x * sin[None, :]
    tl.store(base + x_off, new_x.to(x_ptr.dtype.element_ty), mask=mask)
    tl.store(base + y_off, new_y.to(x_ptr.dtype.element_ty), mask=mask)


def _rotate(positions, t, head_size, cache, is_neox):
    tokens = positions.numel()
    if t is None or tokens == 0 or t.numel() == 0:
        return
    n_heads = t.numel() // (tokens * head_size)
    # [T, H*D]: heads are head_size apart; [T, H, D]: they are stride(1) apart
    head_stride = t.stride(1) if t.dim() == 3 else head_size
    rot_dim = cache.shape[1]
    block_r = triton.next_power_of_2(max(rot_dim // 2, 1))
    block_h = min(triton.next_power_of_2(n_heads), max(1, 4096 // block_r))
    grid = (tokens, triton.cdiv(n_heads, block_h))
    _rope_kernel[grid](
        positions, t, cache, n_heads, t.stride(0), head_stride, rot_dim, IS_NEOX=bool(is_neox),
        BLOCK_H=block_h, BLOCK_R=block_r,
    )


def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox) -> None:
    _rotate(positions, query, head_size, cos_sin_cache, is_neox)
    _rotate(positions, key, head_size, cos_sin_cache, is_neox)
