"""The inputs of the pointwise family's gradients (pointwise.py). The three activation
gradients (log_sigmoid_backward, mish_backward, softplus_backward) share one draw: `self`
N(0, scale^2) or the special values, a N(0, 1) gradient. rrelu_with_noise_backward and
smooth_l1_loss_backward draw their own extra operands. Their cases are in
pointwise_backward_cases.py."""

from __future__ import annotations

import torch

from kgb.aten_families.layout import laid_out
from kgb.operators import Case

# what the activation gradients' `scale=None` cases take as `self`
ACTIVATION_SPECIAL = [0.0, 1.0, -1.0, 10.0, -10.0, 20.0, -20.0, 50.0, -50.0, 100.0, -100.0,
                      float("inf"), float("-inf"), float("nan")]


def _self_and_grad(p, gen, device):
    dtype, grad_dtype, scale = getattr(torch, p["dtype"]), getattr(torch, p["grad_dtype"]), p["scale"]
    if scale is None:
        self = torch.tensor(ACTIVATION_SPECIAL).to(dtype).to(device)
    else:
        layout = None if p["layout"] == "grad-t" else p["layout"]
        self = laid_out(p["shape"], layout, lambda shape: (torch.randn(shape, generator=gen) * scale).to(dtype),
                        device)
    grad_layout = "t" if p["layout"] == "grad-t" else None
    grad = laid_out(p["grad_shape"], grad_layout, lambda shape: torch.randn(shape, generator=gen).to(grad_dtype),
                    device)
    return self, grad


def log_sigmoid_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    self, grad = _self_and_grad(case.params, gen, device)
    # what the forward leaves for the backward on this device (empty on CUDA)
    buffer = torch.ops.aten.log_sigmoid_forward.default(self)[1]
    return dict(grad_output=grad, self=self, buffer=buffer)


def mish_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    self, grad = _self_and_grad(case.params, gen, device)
    return dict(grad_output=grad, self=self)


def softplus_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    self, grad = _self_and_grad(case.params, gen, device)
    return dict(grad_output=grad, self=self, beta=case.params["beta"], threshold=case.params["threshold"])


def rrelu_with_noise_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, grad_dtype, shape = getattr(torch, p["dtype"]), getattr(torch, p["grad_dtype"]), p["shape"]
    lower, upper = p["bounds"]
    full = shape[::-1] if p["layout"] == "t" else (*shape[:-1], 2 * shape[-1]) if p["layout"] == "slice" else shape
    x = torch.randn(full, generator=gen)
    if case.name.startswith("eval-nan"):
        x[torch.rand(full, generator=gen) < 0.05] = float("nan")
    slopes = torch.rand(full, generator=gen) * (upper - lower) + lower
    noise = torch.where(x >= 0, torch.ones(()), slopes)
    if p["is_result"]:
        x = torch.where(x >= 0, x, x * (lower + upper) / 2)  # the forward's output
    self, noise = x.to(dtype).to(device), noise.to(dtype).to(device)
    if p["layout"] == "t":
        self, noise = self.t(), noise.t()
    elif p["layout"] == "slice":
        self, noise = self[..., ::2], noise[..., ::2]
    grad_layout = "t" if p["layout"] == "grad-t" else None
    grad = laid_out(shape, grad_layout, lambda shape: torch.randn(shape, generator=gen).to(grad_dtype), device)
    return dict(grad_output=grad, self=self, noise=noise, lower=lower, upper=upper,
                training=p["training"], self_is_result=p["is_result"])


NONE, MEAN, SUM = 0, 1, 2  # smooth_l1_loss_backward's reductions (at::Reduction)


def smooth_l1_loss_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, target_dtype, shape = getattr(torch, p["dtype"]), getattr(torch, p["target_dtype"]), p["shape"]
    self_layout = "t" if p["layout"] in ("t", "t-slice") else None
    self = laid_out(shape, self_layout, lambda shape: torch.randn(shape, generator=gen).to(dtype), device)
    tshape = p["target_shape"]
    target_layout = "slice" if p["layout"] == "t-slice" else None
    target = laid_out(tshape, target_layout, lambda shape: torch.randn(shape, generator=gen).to(target_dtype),
                      device)
    out_shape = torch.broadcast_shapes(shape, tshape)
    grad = torch.randn(out_shape if p["reduction"] == NONE else (), generator=gen).to(dtype).to(device)
    return dict(grad_output=grad, self=self, target=target, reduction=p["reduction"], beta=p["beta"])
