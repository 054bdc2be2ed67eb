"""Content-addressed storage of big texts (kernel sources, prompts, completions, logs)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


class BlobStore:
    """Texts stored once under `root/<2 hex>/<sha256>`; events refer to them by hash."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def put(self, text: str) -> str:
        data = text.encode()
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, path)  # atomic: readers never see half a blob
        return digest

    def get(self, digest: str) -> str:
        return self._path(digest).read_text()

    def _path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a blob hash: {digest!r}")
        return self.root / digest[:2] / digest
