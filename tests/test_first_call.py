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
