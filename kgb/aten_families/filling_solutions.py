"""The filling family's solutions: each member's kernel files and entry points, assembled
into a self-contained solution.py. Only the generator imports this module
(filling.members), so that no engine, judge or candidate process holds their text."""

from kgb.aten_families import source

# kernels/scalar_fill.py splits a float value with math and struct
IMPORTS = "import math\nimport struct\n\n" + source.IMPORTS

STRIDED = ["strided_index", "scalar_fill", "strided_fill"]

ZERO_ = '''\
def zero_(self):
    return fill_strided(self, 0)
'''

FULL = '''\
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = torch.bool
        elif isinstance(fill_value, int):
            dtype = torch.int64
        else:
            dtype = torch.get_default_dtype()
    out = torch.empty(size, dtype=dtype, device=device)
    fill_buffer(out, fill_value)
    return out
'''

NEW_ONES = '''\
def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = torch.empty(
        size,
        dtype=dtype if dtype is not None else self.dtype,
        device=device if device is not None else self.device,
    )
    fill_buffer(out, 1)
    return out
'''

ZEROS = '''\
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = torch.empty(size, dtype=dtype if dtype is not None else torch.get_default_dtype(), device=device)
    fill_buffer(out, 0)
    return out
'''

# name -> (the kernel files pasted before its entry points, the entry points)
SOLUTIONS = {
    "fill_": (STRIDED, source.kernel_body("fill")),
    "zero_": (STRIDED, ZERO_),
    "full": (["scalar_fill"], FULL),
    "new_ones": (["scalar_fill"], NEW_ONES),
    "zeros": (["scalar_fill"], ZEROS),
}
