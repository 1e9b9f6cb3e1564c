"""Evaluation datasets: `Case` and `Dataset`, and loading them from JSONL or YAML files.

A case names the params the prompt renders with, an optional user message (`input`), an optional
expected output, free-form tags, and the tools whose errors it expects (`expected_tool_errors`:
a tool error fails any other case). In a file, `params` is an object of fields: keyed by params
type name (`{"ReviewParams": {...}}`), or, when the prompt takes one params type, that type's
fields directly. Every case is validated against the prompt's params types while loading; a case
that does not validate is kept as an `InvalidCase` with its file and line, so one bad case is
reported and counted while the others still run.

A JSONL dataset is streamed: memory is bounded whatever the file's size, each line is checked on
its own (too long, not UTF-8, not JSON, nested too deeply, a repeated id: one invalid case each)
and the cases are read again as the run reaches them (`promptkit.evals._dataset_file`). A YAML
dataset is read whole, up to 16 MiB, without aliases. A file that is not a regular file (a
FIFO, a device), a YAML file that does not parse, or one that is not a list of cases raises
`DatasetError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from promptkit.errors import DatasetError
from promptkit.evals._dataset_file import (
    MAX_YAML_BYTES,
    BadLine,
    FileCases,
    case_ids_of,
    mapping_id,
    open_dataset_file,
    read_whole,
    scan_jsonl,
)
from promptkit.prompt import Prompt, describe_validation_error, type_adapter

CASE_FIELDS = frozenset({"id", "params", "input", "expected", "tags", "expected_tool_errors"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})


@dataclass(frozen=True)
class Case:
    """One evaluation case: params objects, an optional user message, the expected output (text
    or a JSON value, None when the case only has evaluators that need none), tags, and the
    names of the tools whose errors the case expects (an error of any other tool fails it)."""

    id: str
    params: tuple[Any, ...] = ()
    input: str | None = None
    expected: Any = None
    tags: tuple[str, ...] = ()
    location: str | None = None
    expected_tool_errors: tuple[str, ...] = ()


DepsFactory = Callable[[Case], Any]
"""What gives a case's evaluation its deps (the application's value for tool handlers): called
with the case, before its evaluation, so each case can run against deps of its own."""


@dataclass(frozen=True)
class InvalidCase:
    """A case from a file that could not be used, with where it is and why."""

    id: str
    location: str
    error: str


@dataclass(frozen=True)
class Dataset:
    """The cases of one dataset, the ones that did not load, and a hash of its content.

    `cases` is a tuple for a dataset built in code, and for a JSONL file a sequence that reads
    each case from the file when it is reached. `content_hash` is the sha256 of the file's bytes
    for a loaded dataset; for one built in code it is computed from the cases, so the same cases
    always give the same hash.
    """

    name: str
    cases: Sequence[Case]
    invalid: tuple[InvalidCase, ...] = ()
    source: str | None = None
    content_hash: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.cases, FileCases):  # a file's ids were checked as it loaded
            object.__setattr__(self, "cases", tuple(self.cases))
            seen: set[str] = set()
            for case in self.cases:
                if case.id in seen:
                    where = f" ({case.location})" if case.location else ""
                    raise DatasetError(
                        f"dataset {self.name}: two cases have the id {case.id!r}{where}; give"
                        " each case a unique id"
                    )
                seen.add(case.id)
        if not self.content_hash:
            object.__setattr__(self, "content_hash", _hash_of_cases(self.cases))

    @property
    def case_ids(self) -> tuple[str, ...]:
        """The id of every case, in order (read from the index, not the file, for a file's)."""
        return case_ids_of(self.cases)

    @property
    def case_tags(self) -> tuple[str, ...]:
        """Every tag used by a case, sorted (a file's cases are read to find them)."""
        return tuple(sorted({tag for case in self.cases for tag in case.tags}))


def load_dataset(path: str | Path, prompt: Prompt[Any]) -> Dataset:
    """The dataset in `path` (`.jsonl`, `.yaml` or `.yml`), its cases checked against `prompt`."""
    file = Path(path)
    if file.suffix not in {".jsonl", *YAML_SUFFIXES}:
        raise DatasetError(
            f"{file}: unknown dataset format {file.suffix or '(no suffix)'!r}; use .jsonl, .yaml"
            " or .yml"
        )
    params_types = prompt_params_types(prompt)

    def parse(value: object, location: str, default_id: str) -> Case:
        return case_from_json(value, params_types, location, default_id)

    with open_dataset_file(file) as handle:
        if file.suffix == ".jsonl":
            cases, problems, content_hash = scan_jsonl(handle, file, parse)
            invalid = [_invalid(file, problem) for problem in problems]
            return Dataset(file.stem, cases, tuple(invalid), str(file), content_hash)
        raw = read_whole(handle, file, MAX_YAML_BYTES)
    return _yaml_dataset(file, raw, parse)


def _invalid(file: Path, problem: BadLine | tuple[int, object, str]) -> InvalidCase:
    if isinstance(problem, BadLine):
        number, case_id, reason = problem.number, None, problem.reason
    else:
        number, value, reason = problem
        case_id = mapping_id(value)
    return InvalidCase(case_id or f"line-{number}", f"{file} line {number}", reason)


def _yaml_dataset(file: Path, raw: bytes, parse: Any) -> Dataset:
    from promptkit.evals._yaml_cases import yaml_documents

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DatasetError(f"{file} line {line}: the dataset is not UTF-8 text") from None
    cases: list[Case] = []
    invalid: list[InvalidCase] = []
    for line, value in yaml_documents(text, file):
        location = f"{file} line {line}"
        try:
            cases.append(parse(value, location, f"line-{line}"))
        except DatasetError as error:
            reason = str(error).removeprefix(f"{location}: ")
            invalid.append(InvalidCase(mapping_id(value) or f"line-{line}", location, reason))
    return Dataset(
        name=file.stem,
        cases=tuple(cases),
        invalid=tuple(invalid),
        source=str(file),
        content_hash=hashlib.sha256(raw).hexdigest(),
    )


def prompt_params_types(prompt: Prompt[Any]) -> dict[str, type[Any]]:
    """The params types `prompt` renders with, by class name."""
    found: dict[str, type[Any]] = {}
    for _path, section in prompt.iter_sections():
        if section.params_type is not None:
            found[section.params_type.__name__] = section.params_type
    return found


def case_from_json(
    value: object, params_types: Mapping[str, type[Any]], location: str, default_id: str
) -> Case:
    """A `Case` from one JSON object of a dataset file; DatasetError says what is wrong."""
    if not isinstance(value, Mapping):
        raise DatasetError(f"{location}: a case is a JSON object, got {_kind(value)}")
    unknown = sorted(set(value) - CASE_FIELDS)
    if unknown:
        raise DatasetError(
            f"{location}: unknown case field(s) {', '.join(map(repr, unknown))}; a case has"
            f" {', '.join(sorted(CASE_FIELDS))}"
        )
    case_id = value.get("id", default_id)
    if not isinstance(case_id, str | int) or isinstance(case_id, bool) or not str(case_id):
        raise DatasetError(f"{location}: `id` must be a non-empty string, got {case_id!r}")
    user_input = value.get("input")
    if user_input is not None and (not isinstance(user_input, str) or not user_input):
        raise DatasetError(f"{location}: `input` must be a non-empty string when given")
    tags = value.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
        raise DatasetError(f"{location}: `tags` must be a list of non-empty strings")
    tool_errors = value.get("expected_tool_errors", [])
    if not isinstance(tool_errors, list) or not all(
        isinstance(name, str) and name for name in tool_errors
    ):
        raise DatasetError(
            f'{location}: `expected_tool_errors` must be a list of tool names, such as ["lookup"]'
        )
    return Case(
        id=str(case_id),
        params=_bind_params(value.get("params", {}), params_types, location),
        input=user_input,
        expected=value.get("expected"),
        tags=tuple(tags),
        location=location,
        expected_tool_errors=tuple(tool_errors),
    )


def _bind_params(
    raw: object, params_types: Mapping[str, type[Any]], location: str
) -> tuple[Any, ...]:
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{location}: `params` must be an object, got {_kind(raw)}")
    if not raw:
        return ()
    accepted = ", ".join(sorted(params_types)) or "none"
    # Type names are keys when any key is one; the fields of the only type otherwise.
    if set(raw) & set(params_types) or len(params_types) != 1:
        strange = ", ".join(sorted(set(raw) - set(params_types)))
        if strange:
            raise DatasetError(
                f"{location}: `params` keys must be params type names of the prompt"
                f" ({accepted}); found {strange}"
            )
        by_type = dict(raw)
    else:
        by_type = {next(iter(params_types)): raw}
    bound: list[Any] = []
    for type_name, fields in by_type.items():
        params_type = params_types[type_name]
        try:
            bound.append(type_adapter(params_type).validate_python(fields))
        except ValidationError as error:
            raise DatasetError(
                f"{location}: params {type_name} do not validate:"
                f" {describe_validation_error(error)}"
            ) from None
    return tuple(bound)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _hash_of_cases(cases: Sequence[Case]) -> str:
    from promptkit._jsonable import json_ready

    document = [
        {
            "id": case.id,
            "params": [json_ready(params) for params in case.params],
            "input": case.input,
            "expected": json_ready(case.expected),
            "tags": list(case.tags),
            # Only when set: the hash of a dataset without them stays what it was.
            **(
                {"expected_tool_errors": list(case.expected_tool_errors)}
                if case.expected_tool_errors
                else {}
            ),
        }
        for case in cases
    ]
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
