"""Judge v29's first call on the timed inputs (kgb.evaluate.first_call): which storages the
warm-up turns, how, and when a case is timed by its first call. The replay around it is
tests/test_staged_replay.py's."""

from __future__ import annotations

import torch

from kgb.evaluate.correctness import storage_pairs
from kgb.evaluate.first_call import FIRST_RATIO, FIRST_SLACK_US, STEP_BYTES, Turned, remembered


def test_the_warm_up_turns_whole_floating_storages_only_and_keeps_their_values():
    """Each turned storage holds the timed values a whole number of elements along; indices,
    a slice's storage (whose other bytes are no drawn values), a storage viewed as integers
    too, and one of a single step keep the timed values."""
    gen = torch.Generator().manual_seed(1)
    timed = {"x": torch.randn(64, 8, generator=gen), "idx": torch.randint(0, 64, (128,), generator=gen),
             "half": torch.randn(256, generator=gen)[:100], "tiny": torch.randn(4, generator=gen),
             "shared": torch.randn(32, generator=gen)}
    timed["bits"] = timed["shared"].view(torch.int32)
    runs_on = {k: v.clone() if k != "bits" else None for k, v in timed.items()}
    runs_on["bits"] = runs_on["shared"].view(torch.int32)
    runs_on["half"] = torch.empty(256)[:100]
    pairs = storage_pairs(list(runs_on.values()), list(timed.values()))
    turned = Turned(pairs, runs_on.values())
    assert turned.nbytes == runs_on["x"].untyped_storage().nbytes()
    before = {k: v.clone() for k, v in timed.items()}
    for _ in range(2):  # applied after each reset: the same turn each time
        turned.apply()
        x = runs_on["x"].reshape(-1)
        assert not torch.equal(x, timed["x"].reshape(-1))
        assert torch.equal(x.sort().values, timed["x"].reshape(-1).sort().values)
        shift = next(k for k in range(1, x.numel()) if torch.equal(x, timed["x"].reshape(-1).roll(k)))
        assert (shift * 4) % STEP_BYTES == 0
    assert all(torch.equal(timed[k], before[k]) for k in timed)  # what the timed values load from
    for name in ("idx", "tiny", "shared"):  # not turned: left as the reset loaded them (here, as cloned)
        assert torch.equal(runs_on[name], timed[name])


def test_a_case_is_timed_by_its_first_call_only_where_it_took_far_longer():
    assert remembered(None, 5.0) == ""  # no first call by the repetitions' clock
    bound = FIRST_RATIO * 5.0 + FIRST_SLACK_US
    assert remembered(bound, 5.0) == ""
    why = remembered(bound + 0.1, 5.0)
    assert why.startswith(f"timed by its first call on the timed inputs, {bound + 0.1:.1f} us, where the calls after "
                          "it took a median 5.0 us")
    assert remembered(241.8, 1.7) != "" and remembered(245.7, 245.8) == ""
    # honest first calls as session 53's H100s timed them beside another process's CUDA start
    # pass (cublasZswap_v2's bench-64m, 1.19 times); a copy 1.3 times faster than its work does not
    assert remembered(2382.1, 1994.9) == "" and remembered(1.3 * 1994.9, 1994.9) != ""


def test_integers_are_turned_only_where_the_spec_says_they_are_plain_values():
    """Spec.turned_args: a comparison's or a sort's integer operands are values, which move
    about like floating ones; an index never does, nor what the spec does not name."""
    from kgb import operators

    keys, idx = torch.arange(64, dtype=torch.int64), torch.arange(64, dtype=torch.int64)
    pairs = [(t.untyped_storage(), t.clone().untyped_storage()) for t in (keys, idx)]
    turned = Turned(pairs, [keys, idx], plain=[keys])
    assert [dst.data_ptr() for dst, _, _ in turned.turns] == [keys.untyped_storage().data_ptr()]
    assert Turned(pairs, [keys, idx]).turns == []  # integers, unnamed: left where they are
    assert operators.load("aten::sort").turned_args == ("self",)
    assert operators.load("aten::eq").turned_args == ("self", "other")
    assert operators.load("aten::gather").turned_args == ()  # its index is what a kernel addresses by


def test_a_tensor_covering_its_storage_in_another_order_turns_as_a_contiguous_one():
    """A transpose or a permutation holds each byte of its storage once: turning its storage
    keeps every value it reads (judge v31). A slice, an expanded tensor or one past a storage's
    start holds other bytes or some twice, and is left as loaded."""
    from kgb.evaluate.first_call import covers_its_storage

    x = torch.randn(6, 4, 5)
    assert covers_its_storage(x) and covers_its_storage(x.transpose(0, 2)) and covers_its_storage(x.permute(1, 2, 0))
    assert covers_its_storage(torch.randn(1, 8, 1).transpose(0, 1))  # sizes of one step over nothing
    assert not covers_its_storage(x[:, :2])  # a slice: the rest of the storage is outside it
    assert not covers_its_storage(torch.randn(4, 1).expand(4, 6))  # each byte read six times
    assert not covers_its_storage(torch.randn(10)[1:])  # from past the storage's start
    assert not covers_its_storage(torch.empty(0))
    t = torch.randn(16, 8).t()
    runs_on = torch.empty_strided(t.shape, t.stride()).copy_(t)  # the same geometry, a storage of its own
    turned = Turned(storage_pairs([runs_on], [t]), [runs_on])
    assert len(turned.turns) == 1
    turned.apply()
    assert not torch.equal(runs_on, t)
    assert torch.equal(runs_on.reshape(-1).sort().values, t.reshape(-1).sort().values)


def test_where_nothing_turns_the_warm_up_loads_another_draw_and_gives_its_memory_back():
    """Drawn (judge v31): each storage the calls run on loaded whole from the same storage of
    another draw, on every apply (after each reset); one of another size is left as loaded;
    released, it holds none of the draw and still says how many bytes it loaded."""
    from kgb.evaluate.first_call import Drawn

    runs_on = [torch.zeros(32, dtype=torch.int64), torch.zeros(8, dtype=torch.uint8)]
    draw = [torch.arange(32, dtype=torch.int64), torch.ones(9, dtype=torch.uint8)]
    drawn = Drawn(storage_pairs(runs_on, draw))
    assert drawn.nbytes == 32 * 8
    for _ in range(2):
        runs_on[0].zero_()
        drawn.apply()
        assert torch.equal(runs_on[0], draw[0]) and not runs_on[1].any()
    drawn.release()
    assert drawn.loads == [] and drawn.nbytes == 32 * 8
    drawn.apply()  # nothing left to load
