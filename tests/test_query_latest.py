"""Which trial is an operator's latest statement when two jobs of one row judged it (session
49's user walk): a files job judged a softmax kernel wrong; another job, of softmax and add,
judged the fixed file correct; the file was edited back and the first job run again, which
kept its trial (same key: not judged again) and said 0 of 1 correct. The leaderboard and the
report said 2 of 2, by the trials' end times: the kept trial is older than the other job's.
Events are synthesised and projected into a SQLite store as the jobs would."""

from __future__ import annotations

import csv
import dataclasses
import io
import time

import pytest
from test_query_scope import Job, project, report

from kgb.query.__main__ import main
from kgb.query.scope import Scope
from kgb.tracking.blobs import BlobStore


def at(events: list, start: float) -> list:
    """The log with its events a second apart from `start`: the jobs' runs interleave in time."""
    return [dataclasses.replace(e, ts=start + i) for i, e in enumerate(events)]


def rerun_keeping(job: Job, planned: list[str], end: str) -> None:
    """A run of the job that judges nothing: its trials' keys match, so it keeps them."""
    job.run(planned, {}, end)


@pytest.mark.parametrize("end", ["finished", "running"])
def test_the_job_that_ran_last_has_the_last_word_though_it_kept_an_older_trial(tmp_path, capsys, end):
    blobs = BlobStore(tmp_path / "blobs")
    now = time.time() - 3600
    x, y = Job("ops-job", blobs), Job("whole-job", blobs)
    x.run(["aten::softmax"], {"aten::softmax": False})  # the edited file: wrong
    first = at(x.events, now)
    y_log = at(y.run(["aten::softmax", "aten::add"], {"aten::softmax": True, "aten::add": True}), now + 100)
    rerun_keeping(x, ["aten::softmax"], end)  # the file edited back: its old trial kept, 0 of 1
    x_log = first + at(x.events[len(first):], now + 200)
    # projected as they ran: a resumed job run is RUNNING again, with its first run's end_time
    uri = project(tmp_path, first, y_log, x_log)

    assert main(["leaderboard", "--format", "csv", "--tracking-uri", uri]) == 0
    [row] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert (row["trials"], row["correct"]) == ("2", "1")  # softmax as the latest run judged it: wrong
    [table] = report(uri, tmp_path / "report", "accuracy")  # the paper's table counts it so too
    assert (table["operators"], table["correct"]) == ("2", "1")


def test_without_job_facts_the_trials_end_times_decide():
    """Tables built with no store (tests, plots of a list of rows) keep the rule they had."""
    from test_report import row

    from kgb.query.leaderboard import by_job

    old = row("aten::a", job="j1", trial="t1", end_ms=1_000)
    new = row("aten::a", job="j2", trial="t2", end_ms=2_000, correct=False)
    [job] = by_job([old, new], Scope()).values()
    assert [r.job for r in job.per_op["aten::a"]] == ["j2"]
