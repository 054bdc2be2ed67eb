"""The generated ATen operators: every file matches its family, names it, and loads as the
family describes it; solutions stay self-contained."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import torch

from kgb import operators
from kgb.aten_families import FAMILIES
from kgb.aten_families.generate import HEADER, files, fingerprint, members, render_solution, stale
from kgb.aten_families.layout import laid_out
from kgb.aten_families.source import kernel_body

ROOT = Path(__file__).resolve().parent.parent


def test_regenerating_changes_nothing():
    assert stale() == [], "run `python -m kgb.aten_families` and commit the result"


def test_generated_files_name_their_family():
    for path, text in files().items():
        family = re.search(r"from kgb/aten_families/(\w+)\.py", text)
        assert family and family[1] in FAMILIES, path
        assert (ROOT / "kgb/aten_families" / f"{family[1]}.py").exists()


def test_specs_load_as_their_family_describes_them():
    for m in members():
        spec = operators.load(f"aten::{m.name}")
        assert spec.task == m.task.strip()
        assert spec.version == m.version
        assert list(map(repr, spec.cases)) == list(map(repr, m.cases))  # repr: NaN params
        assert set(spec.signatures) == {n.name for n in ast.parse(m.signatures).body}
        for name, value in m.binds.items():
            assert getattr(spec.module, name) is getattr(FAMILIES[m.family], value)


def test_solutions_are_self_contained_and_define_every_entry_point():
    for m in members():
        tree = ast.parse(render_solution(m))
        imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not [name for name in imported if name and name.startswith("kgb")], m.name
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert {n.name for n in ast.parse(m.signatures).body} <= defined, m.name


def test_kernel_files_are_pasted_without_docstring_or_imports():
    body = kernel_body("division")
    assert body.startswith("@triton.jit\ndef _fdiv(")
    assert "import" not in body.split("\n", 1)[0] and '"""The division kernel' not in body
    assert body in render_solution(next(m for m in members() if m.name == "floor_divide"))


def test_a_hand_edit_is_reported_stale(tmp_path):
    m = members()[0]
    folder = tmp_path / "aten" / m.name
    folder.mkdir(parents=True)
    generated = files(tmp_path)
    for path, text in generated.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert stale(tmp_path) == []
    spec = folder / "spec.py"
    spec.write_text(spec.read_text().replace("VERSION = 1", "VERSION = 2"))
    assert stale(tmp_path) == [spec]
    assert HEADER.format(family=m.family) in spec.read_text()


def test_layouts_are_views_taken_on_the_device():
    def draw(shape):
        return torch.arange(float(torch.Size(shape).numel())).reshape(shape)

    t = laid_out((2, 3), "t", draw, "cpu")
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.tolist() == [[0, 2, 4], [1, 3, 5]]
    s = laid_out((2, 3), "slice", draw, "cpu")
    assert s.stride() == (6, 2) and s.tolist() == [[0, 2, 4], [6, 8, 10]]
    assert laid_out((2, 3), None, draw, "cpu").is_contiguous()


def test_the_fingerprint_follows_the_cases():
    m = members()[0]
    fewer = dataclasses.replace(m, cases=m.cases[:-1])
    reseeded = dataclasses.replace(m, cases=[dataclasses.replace(m.cases[0], seed=99), *m.cases[1:]])
    assert len({fingerprint(m), fingerprint(fewer), fingerprint(reseeded)}) == 3
    assert f'FAMILY_DIGEST = "{fingerprint(m)}"' in files()[ROOT / "operators/aten" / m.name / "spec.py"]
