"""What a trial run stores for a person to open, and how it is written.

A trial run holds `kernel.py` (its best candidate), `trial.json` (status, reason, every
candidate's verdict and log, every model call's usage: the bundle), `candidates/<id>.py`
where the method proposed more than one kernel, and `calls/NNN-prompt.json` and
`calls/NNN-completion.txt` for each model call (the transcript). The full event stream
stays in the job's events.jsonl; it is not copied into every run.

In a local artifact store every file is a hard link, so the same kernel or prompt, met in
many trials, takes disk space once: a file that is a blob of the job's store (a kernel, a
prompt, a completion) is linked to that blob, read and written by nobody; other texts
(trial.json, an agent's transcript) are linked into one content-addressed pool beside the
runs (`.kgb-cas/<2 hex>/<sha256>`). Where a link cannot be made (another file system)
the bytes are copied. Other stores get the files through MLflow's client.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from kgb.tracking.blobs import BlobStore

if TYPE_CHECKING:  # a query reads artifacts without importing the folds (and the judge they import)
    from kgb.tracking.projections import TrialOutcome

POOL = ".kgb-cas"


@dataclass(frozen=True)
class Stored:
    """A file whose bytes are a blob of the job's store: linked to it where it can be."""

    blobs: BlobStore
    digest: str

    def path(self) -> Path:
        return self.blobs.root / self.digest[:2] / self.digest

    def text(self) -> str:
        return self.blobs.get(self.digest)


File = str | Stored  # an artifact's content: its text, or the blob that holds it


def text_of(content: File) -> str:
    return content if isinstance(content, str) else content.text()


def trial_files(t: TrialOutcome, blobs: BlobStore) -> dict[str, File]:
    """Artifact path -> content, for one finished trial."""
    from kgb.tracking.encoding import to_json

    files: dict[str, File] = {}
    best = t.best
    if best is not None:
        files["kernel.py"] = Stored(blobs, best.source_blob)
    if len(t.candidates) > 1:
        for c in t.candidates:
            files[f"candidates/{c.id}.py"] = Stored(blobs, c.source_blob)
    calls = []
    for i, call in enumerate(t.calls, 1):
        prompt, completion = f"calls/{i:03d}-prompt.json", f"calls/{i:03d}-completion.txt"
        files[prompt] = Stored(blobs, call.request_blob)
        if call.response_blob:
            files[completion] = Stored(blobs, call.response_blob)
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
    """Writes a run's files: hard links where the store is a local folder, MLflow's client
    otherwise."""

    def __init__(self, client: Any):
        self.client = client
        self._folders: set[str] = set()  # made by this writer: no mkdir call per file

    def _folder(self, path: str) -> None:
        if path not in self._folders:
            os.makedirs(path, exist_ok=True)
            self._folders.add(path)

    def write(self, run_id: str, artifact_uri: str, files: dict[str, File]) -> None:
        folder = local_dir(artifact_uri)
        if folder is None:
            self._upload(run_id, {name: text_of(content) for name, content in files.items()})
            return
        root = str(folder)
        pool = os.path.join(os.path.dirname(os.path.dirname(root)), POOL)  # <experiment location>/<run>/artifacts
        for name, content in files.items():
            dest = os.path.join(root, name)
            self._folder(os.path.dirname(dest))
            if os.path.lexists(dest):
                os.unlink(dest)  # a run written again (a half-written one redone) replaces its links
            if isinstance(content, Stored):
                try:
                    os.link(content.path(), dest)
                    continue
                except OSError:  # the blobs on another file system: through the pool
                    content = content.text()
            source = self._pooled(pool, content.encode())
            try:
                os.link(source, dest)
            except OSError:  # another file system, or one without hard links
                shutil.copyfile(source, dest)

    def _pooled(self, pool: str, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        folder = os.path.join(pool, digest[:2])
        path = os.path.join(folder, digest)
        if not os.path.exists(path):
            self._folder(folder)
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: a reader never links half a file
        return path

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

