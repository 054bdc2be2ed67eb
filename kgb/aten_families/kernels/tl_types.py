"""The Triton type of each torch dtype, for kernels told what to convert elements to
(the dtype= argument of sum, mean and cumsum)."""

import torch
import triton.language as tl

_TL = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
       torch.float64: tl.float64, torch.int8: tl.int8, torch.uint8: tl.uint8, torch.int16: tl.int16,
       torch.int32: tl.int32, torch.int64: tl.int64, torch.bool: tl.int1}
