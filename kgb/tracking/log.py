"""The append-only event log of one job: `events.jsonl`, one event per line.

One writer per log appends and flushes every line and fsyncs at trial and run
boundaries, so a killed job loses at most the line it was writing. Readers skip a torn
last line, upgrade older schema versions and refuse newer ones.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from kgb.tracking.encoding import from_json, to_json
from kgb.tracking.events import (
    SCHEMA_VERSION,
    Event,
    RunFinished,
    RunStarted,
    TrialFinished,
)
from kgb.tracking.projections import TrialFold, TrialOutcome

DURABLE = (TrialFinished, RunStarted, RunFinished)


class NewerSchemaError(RuntimeError):
    """The log was written by a newer kgb than this one."""


class EventLog:
    """Appends events to one job's events.jsonl. Thread-safe; one per job.

    It also keeps every event of the file in memory, and their trial outcomes folded as
    each event is appended, so that what a job does after each trial (its progress line,
    its projection) costs the same in its first trial as in its ten-thousandth: nothing
    reads the file again or re-folds the log."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existing = read_events(self.path) if self.path.exists() else []
        self._seq = existing[-1].seq + 1 if existing else 0
        self._events = existing
        self._fold = TrialFold()
        for e in existing:
            self._fold.add(e)
        self._drop_torn_tail()
        self._lock = threading.Lock()
        self._file = self.path.open("a")

    def _drop_torn_tail(self) -> None:
        """A crash mid-write leaves a last line without newline: cut it before appending."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            with self.path.open("r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, event: Event) -> Event:
        """Stamp the event with its seq and time, write it, and return the stamped event (its
        text made writable, `writable_text`)."""
        with self._lock:
            stamped = dataclasses.replace(event, seq=self._seq, ts=time.time())
            line = json.dumps(to_json(stamped))
            if _LONE_SURROGATE in line:
                record = writable_text(json.loads(line))
                stamped, line = from_json(record), json.dumps(record)
            self._file.write(line + "\n")
            self._file.flush()
            if isinstance(stamped, DURABLE):
                os.fsync(self._file.fileno())
            self._seq += 1
            self._events.append(stamped)
            self._fold.add(stamped)
            return stamped

    def events(self) -> Sequence[Event]:
        """Every event of the log so far, as the file holds them: a view of the first n
        events, made without copying them (the log only grows, so the view never changes)."""
        with self._lock:
            return Snapshot(self._events, len(self._events))

    def outcome(self, trial: str) -> TrialOutcome:
        """The trial's outcome folded from its events so far (KeyError for a trial not
        begun). The object is the log's own and keeps changing while the trial goes on."""
        with self._lock:
            return self._fold.trials[trial]

    def outcomes(self) -> dict[str, TrialOutcome]:
        """Every trial's outcome so far, in first-seen order."""
        with self._lock:
            return dict(self._fold.trials)

    def close(self) -> None:
        with self._lock:
            self._file.close()


class Snapshot(Sequence[Event]):
    """The first `n` events of a list that only grows: an O(1) stand-in for a copy."""

    def __init__(self, events: list[Event], n: int):
        self._events, self._n = events, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> list[Event]: ...
    def __getitem__(self, i: int | slice) -> Event | list[Event]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            return self._events[start:stop:step]
        if not -self._n <= i < self._n:
            raise IndexError("event index out of range")
        return self._events[i % self._n]

    def __iter__(self) -> Iterator[Event]:
        return itertools.islice(self._events, self._n)


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """Bring a record of an older schema version to the current one.

    Version 1 is the first; each later version adds one step here, and tests keep a
    golden log of every version.
    """
    version = record.get("schema_version", 1)
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"event schema version {version} is newer than this kgb understands "
            f"({SCHEMA_VERSION}); upgrade kgb to read this log"
        )
    if version == 1:  # 1 -> 2: a job states the settings its verdicts were given under
        if record.get("kind") == "RunStarted":
            from kgb.identity import v1_settings

            record = {**record, "settings": v1_settings(record["config"], record["device"])}
        record = {**record, "schema_version": 2}
    return record


# Text a candidate or a model wrote can hold a lone UTF-16 surrogate (a `"\ud800"` escape in
# JSON, `chr(0xD800)` in an error message), which no UTF-8 writer takes: a candidate whose
# error message quoted one broke the MLflow projection's SQLite writes, on that run and on
# every run of the job after it (session 45's red team). The log keeps such text with U+FFFD
# in its place. Lines are written ASCII-escaped, so every surrogate shows as this escape.
_LONE_SURROGATE = "\\ud"


def writable_text(value: Any) -> Any:
    """`value` (a decoded JSON record) with each lone surrogate in its strings made U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [writable_text(v) for v in value]
    if isinstance(value, dict):
        return {writable_text(k): writable_text(v) for k, v in value.items()}
    return value


def read_events(path: Path) -> list[Event]:
    """All events of a log, in order (gzipped where its name ends in .gz, as docs/results
    keeps them). A torn last line is skipped; a torn line anywhere else is corruption and
    raises."""
    path = Path(path)
    lines = (gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()).split("\n")
    events = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if i >= len(lines) - 2:  # the last line, possibly followed by nothing
                break
            raise ValueError(f"{path}:{i + 1}: corrupt event line") from e
        if _LONE_SURROGATE in line:  # a log written before session 45 may hold one
            record = writable_text(record)
        events.append(from_json(upgrade(record)))
    return events
