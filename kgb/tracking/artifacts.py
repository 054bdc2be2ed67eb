"""What a trial run stores for a person to open, and how it is written.

A trial run holds `kernel.py` (its best candidate), `trial.json` (status, reason, every
candidate's verdict and log, every model call's usage: the bundle), `candidates/<id>.py`
where the method proposed more than one kernel, and `calls/NNN-prompt.json` and
`calls/NNN-completion.txt` for each model call (the transcript). The full event stream
stays in the job's events.jsonl; it is not copied into every run.

In a local artifact store every file is a hard link into one content-addressed pool
beside the runs (`.kgb-cas/<2 hex>/<sha256>`), so the same kernel or prompt, met in many
trials, takes disk space once. Other stores get the files through MLflow's client.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import to_json
from kgb.tracking.projections import TrialOutcome

POOL = ".kgb-cas"


def trial_files(t: TrialOutcome, blobs: BlobStore) -> dict[str, str]:
    """Artifact path -> text, for one finished trial."""
    files: dict[str, str] = {}
    best = t.best
    if best is not None:
        files["kernel.py"] = blobs.get(best.source_blob)
    if len(t.candidates) > 1:
        for c in t.candidates:
            files[f"candidates/{c.id}.py"] = blobs.get(c.source_blob)
    calls = []
    for i, call in enumerate(t.calls, 1):
        prompt, completion = f"calls/{i:03d}-prompt.json", f"calls/{i:03d}-completion.txt"
        files[prompt] = blobs.get(call.request_blob)
        if call.response_blob:
            files[completion] = blobs.get(call.response_blob)
        calls.append({
            "provider": call.provider, "model": call.model, "usage": to_json(call.usage),
            "latency_s": call.latency_s, "retries": call.retries, "stop_reason": call.stop_reason,
            "error": call.error, "prompt": prompt, "completion": completion if call.response_blob else None,
        })
    bundle: dict[str, Any] = {
        "trial": t.key, "op": t.op, "sample": t.sample, "spec_version": t.spec_version,
        "status": t.status.value, "reason": t.reason, "end": t.end.value if t.end else None,
        "wall_s": t.wall_s, "attempts": t.attempts,
        "best": best.id if best is not None else None,
        "verdict": to_json(best.verdict) if best is not None and best.verdict is not None else None,
        "candidates": [
            {"id": c.id, "origin": c.origin, "parents": list(c.parents), "round": c.round,
             "source_sha256": c.source_blob, "verdict": to_json(c.verdict) if c.verdict else None,
             "log": blobs.get(c.logs_blob) if c.logs_blob else ""}
            for c in t.candidates
        ],
        "calls": calls,
        "completions": [{"round": p.round, "outcome": p.outcome.value, "reason": p.reason} for p in t.parses],
    }
    files["trial.json"] = json.dumps(bundle)  # unindented: Python's fast encoder (MLflow's viewer lays it out)
    return files


def local_dir(artifact_uri: str) -> Path | None:
    """The folder of a `file:` artifact URI (or a plain path); None for remote stores."""
    parsed = urlparse(artifact_uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme == "" and artifact_uri.startswith("/"):
        return Path(artifact_uri)
    return None


class ArtifactWriter:
    """Writes a run's files: hard links into the pool where the store is a local folder,
    MLflow's client otherwise."""

    def __init__(self, client: Any):
        self.client = client

    def write(self, run_id: str, artifact_uri: str, files: dict[str, str]) -> None:
        folder = local_dir(artifact_uri)
        if folder is None:
            self._upload(run_id, files)
            return
        pool = folder.parent.parent / POOL  # <experiment location>/<run>/artifacts -> <experiment location>
        for name, text in files.items():
            dest = folder / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = _pooled(pool, text.encode())
            if dest.exists():
                dest.unlink()  # a rewrite (the job's trials table) replaces its link
            try:
                os.link(source, dest)
            except OSError:  # another file system, or one without hard links
                shutil.copyfile(source, dest)

    def replace(self, run_id: str, artifact_uri: str, name: str, text: str) -> None:
        """Write one file that is rewritten as it grows (a job's trials table): replaced in
        place, atomically, and kept out of the pool so its old versions take no space."""
        folder = local_dir(artifact_uri)
        if folder is None:
            self.client.log_text(run_id, text, name)
            return
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.tmp{os.getpid()}"
        tmp.write_text(text)
        os.replace(tmp, folder / name)

    def append(self, run_id: str, artifact_uri: str, name: str, text: str, whole: Callable[[], str]) -> None:
        """Add `text` at the end of a file whose full new content `whole()` gives: appended
        in place where the store is a local folder (a reader skips a torn last line), the
        whole file uploaded again elsewhere."""
        folder = local_dir(artifact_uri)
        if folder is None:
            self.client.log_text(run_id, whole(), name)
            return
        with (folder / name).open("a") as f:
            f.write(text)

    def _upload(self, run_id: str, files: dict[str, str]) -> None:
        with tempfile.TemporaryDirectory(prefix="kgb-artifacts-") as tmp:
            for name, text in files.items():
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            self.client.log_artifacts(run_id, tmp)  # one call for the whole bundle


def _pooled(pool: Path, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    path = pool / digest[:2] / digest
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{digest}.tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: a reader never links half a file
    return path
