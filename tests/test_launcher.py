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


def test_a_candidate_process_finds_a_launcher_the_judges_built_and_nothing_else_of_theirs(tmp_path, monkeypatch):
    from triton import knobs

    own, shared = tmp_path / "workspace-cache", tmp_path / "judges-cache"
    monkeypatch.setattr(knobs.cache, "dir", str(own))
    monkeypatch.setattr(knobs.cache, "manager_class", knobs.cache.manager_class)  # put back after the test
    launcher.read_judges_launchers(str(shared))
    name = launcher.LAUNCHER_PREFIX + ".cpython-312-x86_64-linux-gnu.so"
    (shared / "KEY").mkdir(parents=True)
    for filename in (name, "kernel.cubin"):
        (shared / "KEY" / filename).write_bytes(b"built by a judge")
    cache = knobs.cache.manager_class("KEY")
    assert cache.get_file(name) == str(shared / "KEY" / name)
    assert cache.get_file("kernel.cubin") is None  # a judge's other files are not the candidate's
    assert knobs.cache.manager_class("OTHER").get_file(name) is None
    mine = cache.put(b"built here", name)  # its own copy comes first
    assert cache.get_file(name) == mine and mine.startswith(str(own))


MODULE = """
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "__triton_launcher", NULL, -1, NULL};
PyMODINIT_FUNC PyInit___triton_launcher(void) { return PyModule_Create(&def); }
"""


def test_triton_loads_the_judges_launcher_rather_than_compile_it_again(tmp_path, monkeypatch):
    """Through Triton's own path from a C source to a loaded module: a judge's process builds
    it into the shared cache; a candidate process with the same source loads that one, with
    its C compiler made to fail."""
    from triton import knobs
    from triton.runtime import build

    shared = tmp_path / "judges-cache"
    monkeypatch.setattr(knobs.cache, "manager_class", knobs.cache.manager_class)
    monkeypatch.setattr(knobs.cache, "dir", str(shared))  # the judge
    build.compile_module_from_src(MODULE, launcher.LAUNCHER_PREFIX)
    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path / "workspace-cache"))  # its candidate process
    launcher.read_judges_launchers(str(shared))

    def no_compiler(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(build.subprocess, "check_call", no_compiler)
    assert build.compile_module_from_src(MODULE, launcher.LAUNCHER_PREFIX).__name__ == launcher.LAUNCHER_PREFIX
    with pytest.raises(AssertionError, match="compiled again"):  # a source no judge built
        build.compile_module_from_src(MODULE + "\n/* another signature */\n", launcher.LAUNCHER_PREFIX)
