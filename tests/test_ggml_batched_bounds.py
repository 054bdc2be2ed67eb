"""The ggml MoE specs find their routes, and their check the activations a kernel may round
otherwise, in a few waits for the device rather than a few per expert (a compare of 128
experts waited some 500 times, 3.3 s on a busy H100 that held other judges' timing turns),
with the same results as one expert at a time: the routes, and the tolerance bit for bit.

Cases other than smoke run with 16 weight rows: the routes and what the check flags depend
on the activations and the routing only, and the full weights make the CPU slow."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch

from kgb import operators
from kgb.operators import Case, published_tolerance
from kgb.vllm import ggml, q8_1_check
from kgb.vllm.ggml import moe_case
from kgb.vllm.quant import QUOTIENT_RTOL

OPS = ("vllm::ggml_moe_a8", "vllm::ggml_moe_a8_vec")
SEEDS = (0, 1, 2)
ROWS = 16  # weight rows of the cases other than smoke


@pytest.fixture(autouse=True)
def _one_thread():
    """One torch thread a test: xdist runs two workers per CPU, and torch's threads of each,
    spinning for the others' CPUs, made this file five times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@functools.cache
def _spec(op: str):
    return operators.load(op).module


def _shrunk(case: Case) -> Case:
    return case if case.tag == "smoke" else dataclasses.replace(case, params=dict(case.params, row=ROWS))


def _inputs(op: str, case: Case, seed: int) -> dict:
    return _spec(op).make_inputs(_shrunk(case), torch.Generator().manual_seed(seed), "cpu")


def _routes(op: str, inputs: dict) -> list[tuple[int, torch.Tensor]]:
    if op.endswith("_vec"):
        return _spec(op)._routes(inputs["topk_ids"])
    return _spec(op)._routes(inputs["sorted_token_ids"], inputs["expert_ids"], inputs["num_tokens_post_padded"],
                             inputs["top_k"], inputs["tokens"])


def _routes_per_expert(op: str, inputs: dict) -> list[tuple[int, torch.Tensor]]:
    """The oracle: the routes as the specs found them before, one expert at a time."""
    if op.endswith("_vec"):
        flat = inputs["topk_ids"].reshape(-1).long()
        return [(e, (flat == e).nonzero().reshape(-1)) for e in flat.unique().tolist()]
    used = int(inputs["num_tokens_post_padded"][0])
    ids = inputs["sorted_token_ids"][:used].long()
    slot_expert = inputs["expert_ids"].long().repeat_interleave(4)[:used]
    live = ids < inputs["tokens"] * inputs["top_k"]
    ids, slot_expert = ids[live], slot_expert[live]
    return [(e, ids[slot_expert == e]) for e in slot_expert.unique().tolist()]


def _products(op: str, inputs: dict) -> list[q8_1_check.Product]:
    """What the spec's compare hands to `compare_q8_1`."""
    return [(inputs["W"][e], inputs["type"], inputs["X"][z // inputs["top_k"]], z) for e, z in _routes(op, inputs)]


def _bound_per_product(products: list[q8_1_check.Product], shape: tuple[int, ...]) -> torch.Tensor:
    """The oracle: B as `compare_q8_1` found it before, each bound flagging its product's rows itself."""
    moved = torch.zeros(shape, dtype=torch.float64)
    for w, type_id, x, rows in products:
        moved[rows] = (q8_1_check.q8_1_tie_bound(w, type_id, x, QUOTIENT_RTOL).double()
                       + q8_1_check.q8_1_scale_bound(w, type_id, x, QUOTIENT_RTOL).double()
                       + q8_1_check.q8_1_sum_bound(w, type_id, x).double())
    return moved


def _flags_alone(type_id: int, x: torch.Tensor) -> list[torch.Tensor]:
    """The oracle: what each bound's own `.nonzero()` finds in one product's rows (the columns
    with a value on a half; the rows and blocks of d8, then of s8, that may round either way)."""
    cols = q8_1_check.tie_steps(x, QUOTIENT_RTOL).ne(0).any(0).nonzero().reshape(-1)
    low, high = q8_1_check.d8_interval(x, QUOTIENT_RTOL)
    d8 = (low != high).nonzero(as_tuple=True)
    low, high = q8_1_check.s8_interval(x) if type_id != ggml.Q8_0.id else (low, low)  # Q8_0 does not use s8
    return [cols, *d8, *(low != high).nonzero(as_tuple=True)]


def _output_shape(case: Case) -> tuple[int, int]:
    p = _shrunk(case).params
    return p["tokens"] * p["top_k"], p["row"]


CASES = [pytest.param(op, case, id=f"{op.removeprefix('vllm::')}-{case.name}")
         for op in OPS for case in _spec(op).CASES]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("op,case", CASES)
def test_routes_are_the_per_expert_ones(op, case, seed):
    inputs = _inputs(op, case, seed)
    routes, oracle = _routes(op, inputs), _routes_per_expert(op, inputs)
    assert [e for e, _ in routes] == [e for e, _ in oracle]
    for (_, z), (_, want) in zip(routes, oracle, strict=True):
        assert z.dtype == want.dtype and torch.equal(z, want)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("op,case", CASES)
def test_the_flags_and_the_bound_are_the_per_product_ones(op, case, seed):
    products = _products(op, _inputs(op, case, seed))
    flagged = q8_1_check.flagged_entries(products, QUOTIENT_RTOL)
    for (_, type_id, x, _), found in zip(products, flagged, strict=True):
        want = _flags_alone(type_id, x)
        assert all(torch.equal(f, w) for f, w in zip([found.cols, *found.d8_blocks, *found.s8_blocks], want, strict=True))
    shape = _output_shape(case)
    assert torch.equal(q8_1_check.q8_1_bound(products, torch.empty(shape)), _bound_per_product(products, shape))


def test_the_cases_flag_each_kind_in_some_experts_and_not_in_others():
    """So that the test above meets both branches of `q8_1_bound` for each bound: found for
    some experts, skipped for others."""
    seen = [set(), set(), set()]  # per kind (ties, d8, s8): whether an expert had some
    for op, name in (("vllm::ggml_moe_a8", "qwen1.5-moe-w13-q4_1-f32"),
                     ("vllm::ggml_moe_a8", "deepseek-v2-lite-w13-q4_0"),
                     ("vllm::ggml_moe_a8_vec", "deepseek-v2-lite-w13-q4_0")):
        case = next(c for c in _spec(op).CASES if c.name == name)
        for found in q8_1_check.flagged_entries(_products(op, _inputs(op, case, 0)), QUOTIENT_RTOL):
            for kind, flags in enumerate((found.cols, found.d8_blocks[0], found.s8_blocks[0])):
                seen[kind].add(len(flags) > 0)
    assert seen == [{True, False}] * 3


@pytest.mark.parametrize("op,case", CASES)
def test_compare_passes_the_reference_and_fails_one_element_moved(op, case):
    inputs = _inputs(op, case, 0)
    shrunk = _shrunk(case)
    expected = _spec(op).reference(**inputs)
    assert _spec(op).compare({"return": expected}, {"return": expected}, shrunk, inputs) is None
    moved = q8_1_check.q8_1_bound(_products(op, inputs), expected)
    tol = published_tolerance(str(expected.dtype).removeprefix("torch."), case.reduction,
                              float(expected.double().pow(2).mean().sqrt()))
    i = int(moved.reshape(-1).argmax())  # where the check allows the most
    wrong = expected.clone().reshape(-1)
    e = float(wrong[i])
    wrong[i] = e + 10 * (tol.atol + tol.rtol * abs(e) + (1 + tol.rtol) * float(moved.reshape(-1)[i]))
    message = _spec(op).compare({"return": wrong.reshape(expected.shape)}, {"return": expected}, shrunk, inputs)
    assert message is not None and message.startswith("return value: 1 elements off")


def _waits(monkeypatch, run, *args) -> dict[str, int]:
    """How often `run(*args)` calls the tensor methods that wait for the device."""
    calls = dict.fromkeys(("nonzero", "tolist", "item"), 0)

    def counting(name: str):
        method = getattr(torch.Tensor, name)

        def counted(self, *a, **k):
            calls[name] += 1
            return method(self, *a, **k)
        return counted

    with monkeypatch.context() as m:
        for name in calls:
            m.setattr(torch.Tensor, name, counting(name))
        run(*args)
    return calls


def _many(op: str, experts: int) -> tuple[Case, dict, dict]:
    """A case of 96 tokens over `experts` experts (Q4_1 of float32 rows: all three bounds
    flag), its inputs and its reference's result."""
    case = moe_case("many", "check", 3, 96, experts, 8, ROWS, 256, dtype="float32")
    inputs = _spec(op).make_inputs(case, torch.Generator().manual_seed(0), "cpu")
    return case, inputs, {"return": _spec(op).reference(**inputs)}


@pytest.mark.parametrize("op", OPS)
def test_compare_waits_as_often_for_128_experts_as_for_8(monkeypatch, op):
    case, inputs, expected = _many(op, 8)
    few = _waits(monkeypatch, _spec(op).compare, expected, expected, case, inputs)
    case, inputs, expected = _many(op, 128)
    many = _waits(monkeypatch, _spec(op).compare, expected, expected, case, inputs)
    assert few == many and many["nonzero"] <= 3, (few, many)
    products = _products(op, inputs)
    assert len(products) > 100
    per_product = _waits(monkeypatch, _bound_per_product, products, expected["return"].shape)
    assert per_product["nonzero"] >= 2 * len(products)  # as it was: each bound flagging its own rows
