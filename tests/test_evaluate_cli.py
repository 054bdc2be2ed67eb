"""`python -m kgb.evaluate` (kgb/evaluate/__main__.py): what its last line tells the user."""

from __future__ import annotations

import pytest

from kgb.evaluate.__main__ import main


def last_line(capsys) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


@pytest.mark.slow
def test_with_compile_for_the_success_line_says_the_kernels_compiled_for_that_sm(capsys):
    """A run with --compile-for 90 printed the same line as one without: whether the sm_90
    compile check ran could not be told."""
    assert main(["aten::neg", "--cases", "smoke", "--compile-for", "90"]) == 0
    assert last_line(capsys) == "aten::neg: correct: all 2 cases correct; compiled for sm_90"
    assert main(["aten::neg", "--cases", "smoke"]) == 0
    assert last_line(capsys) == "aten::neg: correct: all 2 cases correct"
