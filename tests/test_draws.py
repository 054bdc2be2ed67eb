"""Bench draws kept between evaluations (kgb.evaluate.draws): the second evaluation that
draws a case keeps it, later ones load exactly what was drawn, and secret draws are never kept."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from kgb.evaluate.codec import layout
from kgb.evaluate.draws import DrawCache


def _spec(tmp_path):
    path = tmp_path / "spec.py"
    path.write_text("# a spec\n")
    return SimpleNamespace(path=path)


def _inputs() -> dict:
    gen = torch.Generator().manual_seed(3)
    base = torch.randn(64, 48, generator=gen).to(torch.bfloat16)
    row = torch.randn(1, 48, generator=gen)
    return {"self": base.t(), "other": base[::2, 1:], "bias": row.expand(64, 48), "scale": 0.5,
            "index": torch.randint(0, 64, (10,), generator=gen), "dtype": torch.float16}


class _Counted:
    def __init__(self):
        self.calls = 0

    def __call__(self) -> dict:
        self.calls += 1
        return _inputs()


def test_the_second_draw_is_kept_and_later_ones_load_it_bit_for_bit(tmp_path):
    cache, spec, draw = DrawCache(str(tmp_path / "draws")), _spec(tmp_path), _Counted()
    (tmp_path / "draws").mkdir()
    case = SimpleNamespace(tag="bench", name="big", seed=11)
    cache.inputs(spec, case, 11, "cpu", draw)
    assert not list((tmp_path / "draws").glob("*.draw"))  # drawn once: a sweep writes nothing
    cache.inputs(spec, case, 11, "cpu", draw)
    loaded = cache.inputs(spec, case, 11, "cpu", draw)
    assert draw.calls == 2
    expected = _inputs()
    assert loaded.keys() == expected.keys()
    for name, want in expected.items():
        got = loaded[name]
        if isinstance(want, torch.Tensor):
            assert got.dtype == want.dtype and layout(got) == layout(want), name
            assert torch.equal(got, want), name
        else:
            assert got == want
    # the two views of one storage still share it (an in-place op on one shows in the other)
    assert loaded["self"].untyped_storage().data_ptr() == loaded["other"].untyped_storage().data_ptr()
    assert loaded["bias"].stride() == (0, 1)


def test_secret_draws_and_other_cases_are_never_kept(tmp_path):
    cache, spec, draw = DrawCache(str(tmp_path)), _spec(tmp_path), _Counted()
    bench = SimpleNamespace(tag="bench", name="big", seed=11)
    check = SimpleNamespace(tag="check", name="small", seed=5)
    for _ in range(3):
        cache.inputs(spec, bench, 12345, "cpu", draw)  # a secret seed, not the case's own
        cache.inputs(spec, check, 5, "cpu", draw)
    assert draw.calls == 6
    assert not list(tmp_path.glob("*.draw"))


def test_a_draw_over_the_limit_is_not_kept_and_a_broken_one_is_drawn_again(tmp_path):
    spec, draw = _spec(tmp_path), _Counted()
    case = SimpleNamespace(tag="bench", name="big", seed=11)
    small = DrawCache(str(tmp_path), limit_bytes=100)
    for _ in range(3):
        small.inputs(spec, case, 11, "cpu", draw)
    assert draw.calls == 3 and not list(tmp_path.glob("*.draw"))
    cache = DrawCache(str(tmp_path))
    cache.inputs(spec, case, 11, "cpu", draw)
    (kept,) = tmp_path.glob("*.draw")
    kept.write_bytes(kept.read_bytes()[:-10])  # cut short
    again = cache.inputs(spec, case, 11, "cpu", draw)
    assert draw.calls == 5 and torch.equal(again["index"], _inputs()["index"])


def test_a_folder_that_cannot_keep_draws_costs_nothing_but_the_saving(tmp_path):
    """A full or missing folder must not fail the evaluation that draws."""
    spec, draw = _spec(tmp_path), _Counted()
    case = SimpleNamespace(tag="bench", name="big", seed=11)
    (tmp_path / "not-a-folder").write_text("")
    cache = DrawCache(str(tmp_path / "not-a-folder"))
    for _ in range(3):
        inputs = cache.inputs(spec, case, 11, "cpu", draw)
    assert draw.calls == 3 and torch.equal(inputs["index"], _inputs()["index"])
