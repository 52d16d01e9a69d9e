"""File checksums recorded in faithwatch's artifacts (detectors, the NLI adapter), a digest of source code, and
the file mode of a written artifact."""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from faithwatch.errors import InputError

if TYPE_CHECKING:
    import numpy as np

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def shareable(path: str | Path) -> None:
    """Give a written artifact file the mode a plain ``open`` would (0666 less the umask): safetensors writes
    through a private temporary file (0600), so the weights beside a 0644 ``detector.json`` were unreadable to
    others."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def safetensors_metadata(path: str | Path, what: str) -> dict[str, str]:
    """The header metadata of a safetensors file; an :class:`InputError` naming ``what`` for a path that is missing,
    a folder or no safetensors file."""
    from safetensors import SafetensorError, safe_open

    where = Path(path)
    if not where.is_file():
        raise InputError(f"{what} {path} " + ("is a folder, not a .safetensors file" if where.is_dir()
                                              else "not found"))
    try:
        with safe_open(str(path), framework="numpy") as f:
            return dict(f.metadata() or {})
    except SafetensorError as exc:
        raise InputError(f"{what} {path} is not a .safetensors file ({exc})") from None


def save_safetensors(tensors: Mapping[str, np.ndarray], path: str | Path, metadata: Mapping[str, str]) -> None:
    """``safetensors.numpy.save_file``, with the metadata keys of the header sorted: safetensors writes them in hash
    order, so equal tensors and metadata gave different bytes (and checksums) from one save to the next. The header
    keeps its length; one that would not (never seen) is left as written."""
    from safetensors.numpy import save_file

    save_file(dict(tensors), str(path), metadata=dict(metadata))
    with open(path, "r+b") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
        if "__metadata__" not in header:
            return
        header["__metadata__"] = dict(sorted(header["__metadata__"].items()))
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        if len(text) <= size:
            fh.seek(8)
            fh.write(text.ljust(size))


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and ast.get_docstring(node, clean=False) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return tree


def code_sha256(folder: str | Path) -> str:
    """Hex sha256 over the names and the code of a folder's ``*.py`` files (sorted, not recursive): their syntax
    trees without comments, docstrings or layout, so that only a change to what the code does changes it."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("*.py")):
        tree = _without_docstrings(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        digest.update(path.name.encode("utf-8") + b"\0" + ast.dump(tree).encode("utf-8") + b"\0")
    return digest.hexdigest()
