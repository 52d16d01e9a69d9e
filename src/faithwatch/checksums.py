"""File checksums recorded in faithwatch's artifacts (detectors, the NLI adapter)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(folder: str | Path, pattern: str = "*.py") -> str:
    """Hex sha256 over the names and bytes of a folder's files matching ``pattern`` (sorted, not recursive)."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob(pattern)):
        digest.update(path.name.encode("utf-8") + b"\0" + file_sha256(path).encode("ascii"))
    return digest.hexdigest()
