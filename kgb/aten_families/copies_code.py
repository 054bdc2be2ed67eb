"""The copies family's code as its specs write it out, member by member: the signatures,
the spec's settings (the torch ops it denies or allows...) and the reference functions, each
as its hand-written spec had it. Its task texts are in copies_text.py."""

SIGNATURES = {
    "_to_copy": '''\
def _to_copy(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, non_blocking: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"""
''',
    "clone": '''\
def clone(self: torch.Tensor, *, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
''',
    "contiguous": '''\
def contiguous(self: torch.Tensor, *, memory_format: torch.memory_format = torch.contiguous_format) -> torch.Tensor:
    """aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)"""
''',
    "copy_": '''\
def copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"""
''',
    "to": '''\
def to_dtype(self: torch.Tensor, dtype: torch.dtype, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_device(self: torch.Tensor, device: torch.device, dtype: torch.dtype, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_other(self: torch.Tensor, other: torch.Tensor, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_dtype_layout(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
''',
    "cat": '''\
def cat(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """aten::cat(Tensor[] tensors, int dim=0) -> Tensor"""
''',
    "stack": '''\
def stack(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """aten::stack(Tensor[] tensors, int dim=0) -> Tensor"""
''',
    "scatter": '''\
def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""


def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value: float | int | bool) -> torch.Tensor:
    """aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"""
''',
    "gather": '''\
def gather(self: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False) -> torch.Tensor:
    """aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"""
''',
    "index_select": '''\
def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """aten::index_select(Tensor self, int dim, Tensor index) -> Tensor"""
''',
    "rot90": '''\
def rot90(self: torch.Tensor, k: int = 1, dims: list[int] = (0, 1)) -> torch.Tensor:
    """aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor"""
''',
    "select_backward": '''\
def select_backward(grad_output: torch.Tensor, input_sizes: list[int], dim: int, index: int) -> torch.Tensor:
    """aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor"""
''',
}

EXTRA = {
    "_to_copy": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
""",
    "clone": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
""",
    "contiguous": """\
KERNEL_REQUIRED = False
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
""",
    "copy_": """\
INOUT_ARGS = ("self",)
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
""",
    "to": """\
KERNEL_REQUIRED = False
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
""",
    "cat": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::cat")
# dtype arithmetic only (no tensor data): the promoted dtype of the inputs
ALLOWED_TORCH_OPS = ("aten::promote_types", "aten::result_type")
""",
    "stack": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::cat", "aten::stack")
# dtype arithmetic only (no tensor data): the promoted dtype of the inputs
ALLOWED_TORCH_OPS = ("aten::promote_types", "aten::result_type")
""",
    "rot90": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::flip", "aten::rot90")
""",
    "select_backward": """\
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::select_backward")
""",
}

REFERENCES = {
    "_to_copy": """\
def reference(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    return torch.ops.aten._to_copy(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                   non_blocking=non_blocking, memory_format=memory_format)
""",
    "clone": """\
def reference(self, *, memory_format=None):
    return torch.ops.aten.clone(self, memory_format=memory_format)
""",
    "contiguous": """\
def reference(self, *, memory_format=torch.contiguous_format):
    return torch.ops.aten.contiguous(self, memory_format=memory_format)
""",
    "copy_": """\
def reference(self, src, non_blocking=False):
    return torch.ops.aten.copy_(self, src, non_blocking)
""",
    "to": """\
def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.dtype(self, dtype, non_blocking, copy, memory_format)


def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.device(self, device, dtype, non_blocking, copy, memory_format)


def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.other(self, other, non_blocking, copy, memory_format)


def to_dtype_layout(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
                    memory_format=None):
    return torch.ops.aten.to.dtype_layout(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                          non_blocking=non_blocking, copy=copy, memory_format=memory_format)


reference = {"to_dtype": to_dtype, "to_device": to_device, "to_other": to_other, "to_dtype_layout": to_dtype_layout}
""",
    "cat": """\
def reference(tensors, dim=0):
    return torch.ops.aten.cat(tensors, dim)
""",
    "stack": """\
def reference(tensors, dim=0):
    return torch.ops.aten.stack(tensors, dim)
""",
    "scatter": """\
def scatter_src(self, dim, index, src):
    return torch.ops.aten.scatter.src(self, dim, index, src)


def scatter_value(self, dim, index, value):
    return torch.ops.aten.scatter.value(self, dim, index, value)


reference = {"scatter_src": scatter_src, "scatter_value": scatter_value}
""",
    "gather": """\
def reference(self, dim, index, *, sparse_grad=False):
    return torch.ops.aten.gather(self, dim, index, sparse_grad=sparse_grad)
""",
    "index_select": """\
def reference(self, dim, index):
    return torch.ops.aten.index_select(self, dim, index)
""",
    "rot90": """\
def reference(self, k=1, dims=(0, 1)):
    return torch.ops.aten.rot90(self, k, list(dims))
""",
    "select_backward": """\
def reference(grad_output, input_sizes, dim, index):
    return torch.ops.aten.select_backward(grad_output, input_sizes, dim, index)
""",
}
