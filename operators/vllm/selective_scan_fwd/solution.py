import torch
import triton
import triton.language as tl


@triton.jit
def _selective_scan_kernel(
    u_ptr, delta_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, bias_ptr, start_ptr, cache_ptr, init_ptr, state_ptr,
    dim, dstate, per_group, seqlen, pad_slot_id,
    u_seq_stride, bc_seq_stride, bc_group_stride, bc_state_stride,
    VARLEN: tl.constexpr, HAS_D: tl.constexpr, HAS_Z: tl.constexpr, HAS_BIAS: tl.constexpr,
    SOFTPLUS: tl.constexpr, HAS_CACHE: tl.constexpr, HAS_INIT: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # One program per (sequence, block of channels): the state [BLOCK_D, dstate] stays in
    # registers while the program walks the sequence's tokens in order.
    b = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = d < dim
    n = tl.arange(0, BLOCK_N)
    n_ok = n < dstate
    mask2 = d_ok[:, None] & n_ok[None, :]
    if HAS_CACHE:
        slot = tl.load(cache_ptr + b)
    else:
        slot = b
    if slot != pad_slot_id:
        if VARLEN:
            first = tl.load(start_ptr + b)
            length = tl.load(start_ptr + b + 1) - first
            tok0 = first.to(tl.int64)  # token offset into [dim, tokens] / [groups, n, tokens]
            row = d.to(tl.int64) * u_seq_stride  # u_seq_stride = total tokens: the channel stride
            bc_base = tok0
            x_base = tok0
        else:
            length = seqlen
            row = b.to(tl.int64) * u_seq_stride + d.to(tl.int64) * seqlen
            bc_base = b.to(tl.int64) * bc_seq_stride
            x_base = 0
        group = d // per_group
        bc_off = bc_base + group.to(tl.int64)[:, None] * bc_group_stride + n[None, :] * bc_state_stride
        A = tl.load(A_ptr + d[:, None] * dstate + n[None, :], mask=mask2, other=0.0)
        if HAS_D:
            Dv = tl.load(D_ptr + d, mask=d_ok, other=0.0)
        if HAS_BIAS:
            bias = tl.load(bias_ptr + d, mask=d_ok, other=0.0)
        s_off = slot.to(tl.int64) * dim * dstate + d[:, None] * dstate + n[None, :]
        h = tl.zeros([BLOCK_D, BLOCK_N], tl.float32)
        if HAS_INIT:
            if tl.load(init_ptr + b) != 0:
                h = tl.load(state_ptr + s_off, mask=mask2, other=0.0).to(tl.float32)
        for t in range(0, length):
            x_off = row + x_base + t
            uv = tl.load(u_ptr + x_off, mask=d_ok, other=0.0).to(tl.float32)
            dt = tl.load(delta_ptr + x_off, mask=d_ok, other=0.0).to(tl.float32)
            if HAS_BIAS:
                dt += bias
            if SOFTPLUS:
                # log1p(e) without losing e's low bits when e is small: log(w) * e / (w - 1)
                e = tl.exp(tl.minimum(dt, 20.0))
                w = 1.0 + e
                log1p = tl.where(w == 1.0, e, tl.log(w) * (e / (w - 1.0)))
                dt = tl.where(dt <= 20.0, log1p, dt)
            Bt = tl.load(B_ptr + bc_off + t, mask=mask2, other=0.0).to(tl.float32)
            Ct = tl.load(C_ptr + bc_off + t, mask=mask2, other=0.0).to(tl.float32)
            h = tl.exp(dt[:, None] * A) * h + (dt * uv)[:, None] * Bt
            y = tl.sum(h * Ct, axis=1)
            if HAS_D:
                y += Dv * uv
            tl.store(delta_ptr + x_off, y.to(delta_ptr.dtype.element_ty), mask=d_ok)
            if HAS_Z:
                zv = tl.load(z_ptr + x_off, mask=d_ok, other=0.0).to(tl.float32)
                gated = y * zv / (1.0 + tl.exp(-zv))
                tl.store(z_ptr + x_off, gated.to(z_ptr.dtype.element_ty), mask=d_ok)
        tl.store(state_ptr + s_off, h.to(state_ptr.dtype.element_ty), mask=mask2)


def selective_scan_fwd(u, delta, A, B, C, D_, z_, delta_bias_, delta_softplus, query_start_loc, cache_indices,
                       has_initial_state, ssm_states, pad_slot_id, block_size=1024,
                       block_idx_first_scheduled_token=None, block_idx_last_scheduled_token=None,
                       initial_state_idx=None):
    varlen = query_start_loc is not None
    dim, dstate = A.shape
    if varlen:
        batch, seqlen = query_start_loc.numel() - 1, 0
        n_groups = B.shape[0]
        u_seq_stride = u.shape[-1]  # channel stride of [dim, tokens]
        bc_seq_stride = 0
    else:
        batch, seqlen = u.shape[0], u.shape[-1]
        n_groups = B.shape[1]
        u_seq_stride = dim * seqlen
        bc_seq_stride = B.stride(0)
    block_n = triton.next_power_of_2(dstate)
    block_d = max(1, min(triton.next_power_of_2(dim), 2048 // block_n, 64))
    grid = (batch, triton.cdiv(dim, block_d))
    any_ptr = A
    _selective_scan_kernel[grid](
        u, delta, A, B, C, D_ if D_ is not None else any_ptr, z_ if z_ is not None else any_ptr,
        delta_bias_ if delta_bias_ is not None else any_ptr,
        query_start_loc if varlen else any_ptr, cache_indices if cache_indices is not None else any_ptr,
        has_initial_state.view(torch.uint8) if has_initial_state is not None else any_ptr, ssm_states,
        dim, dstate, dim // n_groups, seqlen, pad_slot_id,
        u_seq_stride, bc_seq_stride, B.stride(-3), B.stride(-2),
        VARLEN=varlen, HAS_D=D_ is not None, HAS_Z=z_ is not None, HAS_BIAS=delta_bias_ is not None,
        SOFTPLUS=bool(delta_softplus), HAS_CACHE=cache_indices is not None, HAS_INIT=has_initial_state is not None,
        BLOCK_D=block_d, BLOCK_N=block_n,
    )

