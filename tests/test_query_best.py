"""`best` never exports a kernel that a trial on the chip judged not correct (session 49's
user walk): a files kernel judged correct on the smoke cases and wrong_output on
smoke+check was exported, its verdict.json saying all its cases passed."""

from __future__ import annotations

import dataclasses
import shutil

from test_query_scope import Job, project
from test_report import row

from kgb.query.__main__ import main
from kgb.query.best import Judged, best_row
from kgb.tracking.blobs import BlobStore

SMOKE = "cpu cases=smoke timeout=300s judge=v27"
FULL = "cpu cases=smoke+check timeout=300s judge=v27"


def test_a_kernel_that_failed_fuller_cases_is_never_the_best():
    fast_smoke = row("aten::softmax", chip="cpu", run_id="r1", trial="t1", speedup=3.0, settings=SMOKE)
    wrong_full = row("aten::softmax", chip="cpu", run_id="r2", trial="t2", correct=False, settings=FULL)
    slow_full = row("aten::softmax", chip="cpu", run_id="r3", trial="t3", speedup=1.2, settings=FULL)
    sources = {"r1": Judged("k-fast", frozenset()), "r2": Judged(None, frozenset({"k-fast"})),
               "r3": Judged("k-slow", frozenset())}
    rows = [fast_smoke, wrong_full, slow_full]
    assert best_row(rows, "aten::softmax", sources) == slow_full  # the fast one failed on smoke+check
    assert best_row(rows[:2], "aten::softmax", sources) is None  # no kernel left
    # a failure of another operator's kernel, or of a kernel one candidate later fixed, refutes nothing else
    other = dataclasses.replace(wrong_full, op="aten::add", run_id="r4")
    assert best_row([fast_smoke, other], "aten::softmax", {**sources, "r4": sources["r2"]}) == fast_smoke


def test_best_refuses_a_kernel_another_job_judged_wrong_and_names_the_settings(tmp_path, capsys):
    """Two jobs judged the same kernel source (the helper's `# aten::softmax`), one correct
    and one wrong: nothing is exported. A store of the correct one alone exports it and says
    what it was judged under."""
    blobs = BlobStore(tmp_path / "both" / "blobs")  # where `project` reads them
    right = Job("right", blobs).run(["aten::softmax"], {"aten::softmax": True})
    wrong = Job("wrong", blobs, model="other").run(["aten::softmax"], {"aten::softmax": False})
    both = project(tmp_path / "both", right, wrong)
    shutil.copytree(tmp_path / "both" / "blobs", tmp_path / "alone" / "blobs")
    alone = project(tmp_path / "alone", right)
    capsys.readouterr()

    assert main(["best", "--op", "aten::softmax", "--chip", "cpu", "--dest", str(tmp_path / "out"),
                 "--tracking-uri", both]) == 1
    assert "failed in another" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()

    assert main(["best", "--op", "aten::softmax", "--chip", "cpu", "--dest", str(tmp_path / "out"),
                 "--tracking-uri", alone]) == 0
    assert "judged under: cpu cases=smoke timeout=300s" in capsys.readouterr().out
    assert (tmp_path / "out" / "kernel.py").read_text() == "# aten::softmax"
