"""Triton's launchers built ahead of a kernel's first launch (kgb.evaluate.launcher)."""

from types import SimpleNamespace

import pytest
from triton.runtime import driver

from kgb.evaluate import launcher


class _Driver:
    def __init__(self, fail: bool = False):
        self.built, self.fail = [], fail

    def launcher_cls(self, src, metadata):
        if self.fail:
            raise RuntimeError("no C compiler")
        self.built.append((src, metadata))


@pytest.fixture
def fake_driver(monkeypatch):
    def set_(fake):
        monkeypatch.setattr(driver, "_active", fake)  # no GPU here: Triton has no driver of its own
        return fake

    return set_


def test_the_launcher_is_built_from_the_kernels_source_and_metadata(fake_driver):
    fake = fake_driver(_Driver())
    kernel = SimpleNamespace(src="signature", metadata="metadata")
    launcher.build(kernel)
    assert fake.built == [("signature", "metadata")]


def test_a_launcher_that_fails_to_build_is_left_to_the_first_launch(fake_driver):
    fake_driver(_Driver(fail=True))
    launcher.build(SimpleNamespace(src="signature", metadata="metadata"))  # raises nothing
    launcher.build(object())  # nor does what is not a compiled kernel (an asynchronous compile's future)
