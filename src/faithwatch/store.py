"""The one resumable JSONL store: every row is flushed and fsynced as it is written, rows are found by a key, and
a crash never loses or duplicates finished work.

Reading repairs what a crash can leave behind, and only that:

* a last line cut mid-write (it does not parse) is cut off the file;
* a last line that parses but lacks its newline is kept, and the newline is written before the next row;
* a corrupt line elsewhere (hand edits, a disk error) is reported in :attr:`JsonlStore.corrupt` and skipped;
  the good lines after it are kept.

Files written whole (Parquet shards, shards of rows) go through :func:`write_atomic`: on disk completely or not at
all. Text files given by users are read by :func:`read_utf8`.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithwatch.errors import InputError

Row = dict[str, Any]


def read_utf8(path: Path, what: str = "file") -> str:
    """The text of a UTF-8 file (a byte-order mark dropped); one in another encoding is an :class:`InputError`
    naming ``what``, the path and the first bad byte."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {path} is not UTF-8 text (byte {exc.start + 1}): save it as UTF-8") from None


def lines_of(text: str) -> list[str]:
    """The lines of JSONL text, cut at newlines only: ``str.splitlines`` also cuts at U+2028, U+0085 and the like,
    which JSON strings may hold as they are (``json.dumps(..., ensure_ascii=False)``)."""
    return text.split("\n")


def read_lines(path: Path, what: str = "file") -> list[str]:
    """The lines (:func:`lines_of`) of a UTF-8 JSONL file (:func:`read_utf8`)."""
    return lines_of(read_utf8(path, what))


@dataclass(frozen=True)
class CorruptLine:
    """A line of the store that could not be read (1-based line number, and why)."""

    line: int
    reason: str


@dataclass
class JsonlStore:
    """Rows of a JSONL file by ``key(row)``; the last row of a key wins.

    ``accept`` filters rows (e.g. another cache version) without counting them as corrupt.
    """

    path: Path
    key: Callable[[Row], Hashable]
    accept: Callable[[Row], bool] | None = None
    corrupt: list[CorruptLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def load(self, repair: bool = True) -> dict[Hashable, Row]:
        """Every readable row by key, after repairing a torn last line (see the module doc). ``repair=False``
        reads without writing (a torn last line is skipped, an unterminated one kept): for readers that do not
        append, so that a writer still running is never cut short."""
        self.corrupt = []
        rows: dict[Hashable, Row] = {}
        if not self.path.exists():
            return rows
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        for n, raw in enumerate(lines, start=1):
            parsed = self._parse(raw)
            if isinstance(parsed, str):
                if raw.strip():
                    self.corrupt.append(CorruptLine(n, parsed))
                continue
            if self.accept is None or self.accept(parsed):
                rows[self.key(parsed)] = parsed
        if tail:
            parsed = self._parse(tail)
            if isinstance(parsed, str):  # cut mid-write: drop it
                if repair:
                    with self.path.open("r+b") as handle:
                        handle.truncate(len(data) - len(tail))
            else:  # complete but unterminated: keep it, terminate it
                if repair:
                    with self.path.open("ab") as handle:
                        handle.write(b"\n")
                        _sync(handle)
                if self.accept is None or self.accept(parsed):
                    rows[self.key(parsed)] = parsed
        return rows

    def _parse(self, raw: bytes) -> Row | str:
        try:
            row = json.loads(raw.decode("utf-8"))
            if not isinstance(row, dict):
                return "not a JSON object"
            self.key(row)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return f"not JSON ({exc})"
        except (KeyError, TypeError, ValueError) as exc:
            return f"no key ({exc})"
        return row

    @contextmanager
    def appending(self) -> Iterator[Callable[[Mapping[str, Any]], None]]:
        """A function that appends one row durably (NaN and infinities refused), for the ``with`` block."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:

            def put(row: Mapping[str, Any]) -> None:
                handle.write(json.dumps(dict(row), ensure_ascii=False, allow_nan=False) + "\n")
                _sync(handle)

            yield put

    def append(self, row: Mapping[str, Any]) -> None:
        """Append one row durably (opens the file for this row only)."""
        with self.appending() as put:
            put(row)

    def reset(self) -> None:
        """Start afresh: remove the file."""
        self.path.unlink(missing_ok=True)


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Create ``path`` whole or not at all: ``write`` fills a temporary file beside it (a dot name, which folder
    readers such as pyarrow skip), which is synced and renamed to ``path``; a killed writer leaves only that
    temporary file (see :func:`remove_temporary`)."""
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_folder_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Create the folder ``path`` whole, replacing what is there only once ``write`` has filled a new one: it writes
    into a dot folder beside ``path``, which then takes ``path``'s place (the old folder is moved aside first and
    deleted last). A failed ``write`` leaves ``path`` as it was; a killed one leaves the dot folder, which the
    next call clears."""
    path = Path(path).resolve()  # "." has no name to put a dot folder beside
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, old = path.with_name(f".{path.name}.tmp"), path.with_name(f".{path.name}.old")
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    try:
        write(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)


def remove_temporary(folder: Path) -> int:
    """Delete what killed :func:`write_atomic` calls left in ``folder``; returns how many files."""
    stale = list(Path(folder).glob(".*.tmp"))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return len(stale)


def _sync(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())
