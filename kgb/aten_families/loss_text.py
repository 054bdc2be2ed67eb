"""What each member of the loss family says for itself: its task text, signatures and
reference function (written into its spec). Cases, inputs and the table of members are in
`loss.py`; the kernels in `kernels/`."""

# ------------------------------------------------------------ binary_cross_entropy_with_logits

BINARY_CROSS_ENTROPY_WITH_LOGITS_TASK = """\
Binary cross-entropy on logits: `aten::binary_cross_entropy_with_logits`.

`binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1)`
computes, elementwise, with x = self and t = target:
  ls   = log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
  ls   = ls * ((pos_weight - 1) * t + 1)        if pos_weight is given
  loss = (1 - t) * x - ls
  loss = loss * weight                           if weight is given
which equals -w * (pw * t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x))), then
reduces it: 0 = none (elementwise), 1 = mean (a 0-d tensor; NaN when empty), 2 = sum
(a 0-d tensor; 0 when empty).

- `target`, `weight` and `pos_weight` broadcast against `self` (NumPy rules; typically
  `pos_weight` has one value per class along the last dimension); the unreduced result
  has the broadcast shape, which is the shape of `self` in the cases here. Targets are
  probabilities in [0, 1] (often exactly 0 or 1).
- dtypes: float16, bfloat16 or float32, the same for every tensor; the result has that
  dtype. PyTorch evaluates the steps above in the input dtype, rounding each one
  (log_sigmoid, each product, sum and difference); a reduction adds these rounded losses
  in float32 and rounds the mean or sum once. Half-precision inputs appear here with
  mean and sum reductions (autocast runs this op in float32).
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: the `out=` variant.
"""

BINARY_CROSS_ENTROPY_WITH_LOGITS_SIGNATURES = '''\
def binary_cross_entropy_with_logits(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None, pos_weight: torch.Tensor | None = None, reduction: int = 1) -> torch.Tensor:
    """aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor"""
'''

BINARY_CROSS_ENTROPY_WITH_LOGITS_REFERENCES = '''\
def reference(self, target, weight=None, pos_weight=None, reduction=1):
    return torch.ops.aten.binary_cross_entropy_with_logits.default(self, target, weight, pos_weight, reduction)
'''


# ------------------------------------------------------------ huber_loss

HUBER_LOSS_TASK = """\
Huber loss: `aten::huber_loss`.

`huber_loss(self, target, reduction=1, delta=1.0)`: with z = |self - target| elementwise,
  loss = 0.5 * z * z            if z < delta
  loss = delta * (z - 0.5 * delta)  otherwise,
then reduced according to `reduction`: 0 = none (the elementwise losses), 1 = mean
(a 0-d tensor; NaN when there are no elements), 2 = sum (a 0-d tensor; 0 when empty).

- `self` and `target` broadcast against each other (NumPy rules); the unreduced result
  has the broadcast shape. `delta` > 0 is a Python float.
- dtypes: float16, bfloat16 or float32, the same for both; the result has that dtype.
  PyTorch evaluates the formula in the input dtype, rounding every operation (z = |a - b|,
  0.5 * z, then * z; or z - 0.5 * delta, then * delta, with delta itself rounded to the
  dtype); a reduction adds these rounded losses in float32 and rounds the mean or sum once.
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: `huber_loss.out`.
"""

HUBER_LOSS_SIGNATURES = '''\
def huber_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1, delta: float = 1.0) -> torch.Tensor:
    """aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor"""
'''

HUBER_LOSS_REFERENCES = '''\
def reference(self, target, reduction=1, delta=1.0):
    return torch.ops.aten.huber_loss.default(self, target, reduction, delta)
'''


# ------------------------------------------------------------ margin_ranking_loss

MARGIN_RANKING_LOSS_TASK = """\
Margin ranking loss: `aten::margin_ranking_loss`.

`margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1)` computes,
elementwise, loss = max(0, -target * (input1 - input2) + margin), then reduces it:
0 = none (elementwise), 1 = mean (a 0-d tensor; NaN when empty), 2 = sum (a 0-d tensor;
0 when empty).

- The three tensors broadcast against each other (NumPy rules); the unreduced result has
  the broadcast shape. `target` holds 1 (input1 should rank higher) or -1.
- dtypes: float16, bfloat16 or float32, the same for all three; the result has that dtype.
  PyTorch evaluates the formula in the input dtype, rounding each step (the difference,
  the product with -target, the sum with the margin); a reduction adds the rounded losses
  in float32 and rounds the mean or sum once.
- Inputs may have any strides; they must not be modified.
- Required: the default overload (it has no `out=` variant).
"""

MARGIN_RANKING_LOSS_SIGNATURES = '''\
def margin_ranking_loss(input1: torch.Tensor, input2: torch.Tensor, target: torch.Tensor, margin: float = 0.0, reduction: int = 1) -> torch.Tensor:
    """aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor"""
'''

MARGIN_RANKING_LOSS_REFERENCES = '''\
def reference(input1, input2, target, margin=0.0, reduction=1):
    return torch.ops.aten.margin_ranking_loss.default(input1, input2, target, margin, reduction)
'''


# ------------------------------------------------------------ soft_margin_loss

SOFT_MARGIN_LOSS_TASK = """\
Soft margin (logistic) loss: `aten::soft_margin_loss`.

`soft_margin_loss(self, target, reduction=1)` computes, elementwise,
loss = log(1 + exp(-target * self)), then reduces it: 0 = none (elementwise), 1 = mean
(a 0-d tensor; NaN when empty), 2 = sum (a 0-d tensor; 0 when empty).

- `target` broadcasts to the shape of `self` (NumPy rules; PyTorch writes the losses into
  a tensor of self's shape, so `self` is never the one expanded); the unreduced result has
  the shape of `self`. `target` holds 1 or -1.
- dtypes: float16, bfloat16 or float32, the same for both; the result has that dtype.
  PyTorch evaluates it as log1p(exp((-self) * target)) in the input dtype, rounding after
  the product, the exp and the log1p (in float16, exp overflows to inf for arguments above
  about 11.1, and the loss is then inf); a reduction adds the rounded losses in float32
  and rounds the mean or sum once. Half-precision inputs appear here with mean and sum
  reductions.
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: `soft_margin_loss.out`.
"""

SOFT_MARGIN_LOSS_SIGNATURES = '''\
def soft_margin_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1) -> torch.Tensor:
    """aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor"""
'''

SOFT_MARGIN_LOSS_REFERENCES = '''\
def reference(self, target, reduction=1):
    return torch.ops.aten.soft_margin_loss.default(self, target, reduction)
'''
