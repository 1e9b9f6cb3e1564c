"""Reading dataset files with bounded memory, whatever they hold.

`open_dataset_file` opens only a regular file (`promptkit._input_files`): a FIFO (which would
block), a device such as `/dev/zero` (which never ends) or a socket is refused unopened.

A JSONL dataset is read in one pass, a line at a time (lines end at `\\n` only: U+2028, U+2029
and U+0085 are allowed inside JSON strings), hashing the bytes as they go; each line is checked
on its own, so a line that is too long, not UTF-8, not JSON or nested too deeply is one invalid
case and the others still load. What is kept is an index (where each valid case starts, a
64-bit hash of its line, its id), never the cases: `FileCases` reads each case again when the
run reaches it, and refuses a line whose bytes changed since the dataset was loaded. Memory
then grows with the number of cases, not with the size of the file.

A YAML dataset is built in memory, so it is bounded in size (`MAX_YAML_BYTES`); the YAML reader
refuses aliases (`promptkit.evals._yaml_cases`).
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, overload

from promptkit._input_files import open_regular_file, read_limited
from promptkit.errors import DatasetError, InputFileError

MAX_CASE_LINE_BYTES = 16 * 1024 * 1024
"""A JSONL line longer than this is an invalid case (and is never held in memory whole)."""
MAX_CASE_DEPTH = 64
"""How deeply the JSON of one case may nest (objects and arrays); deeper is an invalid case."""
MAX_YAML_BYTES = 16 * 1024 * 1024
"""A YAML dataset larger than this is refused: it is read whole; use JSONL for large datasets."""
_SKIP_CHUNK = 1024 * 1024

CaseParser = Callable[[object, str, str], Any]
"""Builds a case from one line's JSON value, its location and default id; raises DatasetError."""


def open_dataset_file(path: Path) -> BinaryIO:
    """`path` opened for reading when it is a regular file; DatasetError saying why not."""
    try:
        return open_regular_file(path)
    except InputFileError as error:
        raise DatasetError(f"cannot use the dataset {error}") from None


@dataclass(frozen=True)
class BadLine:
    """A line of a JSONL dataset that is not a case, and why."""

    number: int
    reason: str


@dataclass(frozen=True)
class _Index:
    offsets: array[int]
    numbers: array[int]
    hashes: array[int]
    ids: tuple[str, ...]


def scan_jsonl(
    handle: BinaryIO, file: Path, parse: CaseParser
) -> tuple[FileCases, list[BadLine | tuple[int, object, str]], str]:
    """Read a JSONL dataset once: its cases' index, its problems in line order, its sha256.

    A problem is a `BadLine`, or (line, value, reason) for a JSON value `parse` refused.
    """
    digest = hashlib.sha256()
    offsets, numbers, hashes = array("q"), array("q"), array("Q")
    ids: list[str] = []
    seen: set[str] = set()
    problems: list[BadLine | tuple[int, object, str]] = []
    offset = number = 0
    while raw := handle.readline(MAX_CASE_LINE_BYTES + 1):
        number += 1
        start = offset
        digest.update(raw)
        offset += len(raw)
        if len(raw) > MAX_CASE_LINE_BYTES and not raw.endswith(b"\n"):
            length = len(raw) + _skip_rest_of_line(handle, digest)
            offset = start + length
            problems.append(
                BadLine(
                    number,
                    f"the line is {length:,} bytes, over the {MAX_CASE_LINE_BYTES:,} bytes a case"
                    " may take",
                )
            )
            continue
        value = decode_line(raw, number)
        if value is _BLANK:
            continue
        if isinstance(value, BadLine):
            problems.append(value)
            continue
        location = f"{file} line {number}"
        try:
            case = parse(value, location, f"line-{number}")
        except DatasetError as error:
            problems.append((number, value, str(error).removeprefix(f"{location}: ")))
            continue
        if case.id in seen:
            problems.append(
                (number, value, f"another case before it has the id {case.id!r}; ids are unique")
            )
            continue
        seen.add(case.id)
        ids.append(case.id)
        offsets.append(start)
        numbers.append(number)
        hashes.append(_line_hash(raw))
    index = _Index(offsets, numbers, hashes, tuple(ids))
    return FileCases(file, index, parse), problems, digest.hexdigest()


_BLANK = object()


def decode_line(raw: bytes, number: int) -> object:
    """The JSON value of one line, `_BLANK` for a blank line, or a BadLine saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return BadLine(number, "the line is not UTF-8 text")
    text = text.removesuffix("\n").removesuffix("\r")
    if not text.strip():
        return _BLANK
    try:
        value = json.loads(text)
    except RecursionError:
        return BadLine(number, f"not a JSON object: nested deeper than {MAX_CASE_DEPTH} levels")
    except ValueError as error:
        return BadLine(number, f"not a JSON object: {error}")
    if _depth_over(value, MAX_CASE_DEPTH):
        return BadLine(number, f"not a case: nested deeper than {MAX_CASE_DEPTH} levels")
    return value


def _depth_over(value: object, limit: int) -> bool:
    """Whether `value` nests lists and objects deeper than `limit` (walked without recursion)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Sequence[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def _skip_rest_of_line(handle: BinaryIO, digest: Any) -> int:
    skipped = 0
    while chunk := handle.readline(_SKIP_CHUNK):
        digest.update(chunk)
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def _line_hash(raw: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


class FileCases(Sequence[Any]):
    """The valid cases of a JSONL file, read from it again on each access (see the module doc).

    Iterating reads the file from the first case to the last; a case whose line changed since
    it was indexed raises DatasetError rather than run something that was not loaded.
    """

    def __init__(self, file: Path, index: _Index, parse: CaseParser) -> None:
        self._file = file
        self._index = index
        self._parse = parse

    @property
    def ids(self) -> tuple[str, ...]:
        return self._index.ids

    def __len__(self) -> int:
        return len(self._index.ids)

    @overload
    def __getitem__(self, position: int) -> Any: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[Any]: ...

    def __getitem__(self, position: int | slice) -> Any:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        with open_dataset_file(self._file) as handle:
            return self._read(handle, range(len(self))[position])

    def __iter__(self) -> Iterator[Any]:
        if not len(self):
            return
        with open_dataset_file(self._file) as handle:
            for position in range(len(self)):
                yield self._read(handle, position)

    def __repr__(self) -> str:
        return f"FileCases({str(self._file)!r}, {len(self)} cases)"

    def _read(self, handle: BinaryIO, position: int) -> Any:
        index = self._index
        number = index.numbers[position]
        handle.seek(index.offsets[position])
        raw = handle.readline(MAX_CASE_LINE_BYTES + 1)
        if _line_hash(raw) != index.hashes[position]:
            raise DatasetError(
                f"{self._file} line {number}: the dataset changed since it was loaded; load it"
                " again (an evaluation runs the cases it loaded, or none)"
            )
        # The same bytes as when the case was loaded, so they decode and parse as they did.
        value = decode_line(raw, number)
        return self._parse(value, f"{self._file} line {number}", f"line-{number}")


def read_whole(handle: BinaryIO, file: Path, limit: int) -> bytes:
    """All of a file, refused past `limit` bytes with DatasetError."""
    try:
        return read_limited(handle, file, limit)
    except InputFileError as error:
        raise DatasetError(
            f"{error}: a YAML dataset is read whole; write large datasets as JSONL, one case per"
            " line"
        ) from None


def case_ids_of(cases: Sequence[Any]) -> tuple[str, ...]:
    """The ids of `cases`, from the index when they are a file's."""
    if isinstance(cases, FileCases):
        return cases.ids
    return tuple(case.id for case in cases)


def mapping_id(value: object) -> str | None:
    """The `id` a JSON value gives itself, when it is an object with one."""
    case_id = value.get("id") if isinstance(value, Mapping) else None
    return str(case_id) if case_id else None
