"""The generated vLLM solutions: each matches its parts, names them, and stays one
self-contained file that never imports kgb."""

from __future__ import annotations

import ast

from kgb.generated_files import stale
from kgb.vllm.generate import HEADER, files, ops, render


def test_regenerating_changes_nothing():
    assert stale(files()) == [], "run `python -m kgb.vllm.generate` and commit the result"


def test_solutions_are_self_contained_and_define_their_entry_point():
    for op in ops():
        text = render(op)
        assert text.startswith(HEADER.format(op=op))
        tree = ast.parse(text)
        imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not [name for name in imported if name and name.startswith("kgb")], op
        defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
        assert op in defined and len(defined) == len(set(defined)), op


def test_a_hand_edit_is_reported_stale(tmp_path):
    generated = files(tmp_path)
    for path, text in generated.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert stale(files(tmp_path)) == []
    path = next(iter(generated))
    path.write_text(path.read_text() + "# hand edit\n")
    assert stale(files(tmp_path)) == [path]
