"""Evaluation datasets: `Case` and `Dataset`, and loading them from JSONL or YAML files.

A case names the params the prompt renders with, an optional user message (`input`), an
optional expected output and free-form tags. In a file, `params` is an object of fields: keyed
by params type name (`{"ReviewParams": {...}}`), or, when the prompt takes one params type, that
type's fields directly. Every case is validated against the prompt's params types while loading;
a case that does not validate is kept as an `InvalidCase` with its file and line, so one bad case
is reported and counted while the others still run. A file that cannot be read as a whole (not
UTF-8, not YAML, not a list of cases) raises `DatasetError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from promptkit.errors import DatasetError
from promptkit.prompt import Prompt, describe_validation_error, type_adapter

CASE_FIELDS = frozenset({"id", "params", "input", "expected", "tags"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})


@dataclass(frozen=True)
class Case:
    """One evaluation case: params objects, an optional user message, the expected output (text
    or a JSON value, None when the case only has evaluators that need none) and tags."""

    id: str
    params: tuple[Any, ...] = ()
    input: str | None = None
    expected: Any = None
    tags: tuple[str, ...] = ()
    location: str | None = None


@dataclass(frozen=True)
class InvalidCase:
    """A case from a file that could not be used, with where it is and why."""

    id: str
    location: str
    error: str


@dataclass(frozen=True)
class Dataset:
    """The cases of one dataset, the ones that did not load, and a hash of its content.

    `content_hash` is the sha256 of the file's bytes for a loaded dataset; for one built in code
    it is computed from the cases, so the same cases always give the same hash.
    """

    name: str
    cases: tuple[Case, ...]
    invalid: tuple[InvalidCase, ...] = ()
    source: str | None = None
    content_hash: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                where = f" ({case.location})" if case.location else ""
                raise DatasetError(
                    f"dataset {self.name}: two cases have the id {case.id!r}{where}; give each"
                    " case a unique id"
                )
            seen.add(case.id)
        if not self.content_hash:
            object.__setattr__(self, "content_hash", _hash_of_cases(self.cases))

    @property
    def case_tags(self) -> tuple[str, ...]:
        """Every tag used by a case, sorted."""
        return tuple(sorted({tag for case in self.cases for tag in case.tags}))


def load_dataset(path: str | Path, prompt: Prompt[Any]) -> Dataset:
    """The dataset in `path` (`.jsonl`, `.yaml` or `.yml`), its cases checked against `prompt`."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise DatasetError(f"{file}: cannot read the dataset ({error.strerror or error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DatasetError(f"{file} line {line}: the dataset is not UTF-8 text") from None
    if file.suffix in YAML_SUFFIXES:
        from promptkit.evals._yaml_cases import yaml_documents

        entries: Iterable[tuple[int, object]] = yaml_documents(text, file)
    elif file.suffix == ".jsonl":
        entries = _jsonl_entries(text, file)
    else:
        raise DatasetError(
            f"{file}: unknown dataset format {file.suffix or '(no suffix)'!r}; use .jsonl, .yaml"
            " or .yml"
        )
    params_types = prompt_params_types(prompt)
    cases: list[Case] = []
    invalid: list[InvalidCase] = []
    for line, value in entries:
        location = f"{file} line {line}"
        default_id = f"line-{line}"
        if isinstance(value, InvalidCase):
            invalid.append(value)
            continue
        try:
            cases.append(case_from_json(value, params_types, location, default_id))
        except DatasetError as error:
            case_id = value.get("id") if isinstance(value, Mapping) else None
            reason = str(error).removeprefix(f"{location}: ")
            invalid.append(InvalidCase(str(case_id) if case_id else default_id, location, reason))
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
    return Case(
        id=str(case_id),
        params=_bind_params(value.get("params", {}), params_types, location),
        input=user_input,
        expected=value.get("expected"),
        tags=tuple(tags),
        location=location,
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


def _jsonl_entries(text: str, file: Path) -> Iterable[tuple[int, object]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as error:
            yield (
                number,
                InvalidCase(
                    f"line-{number}", f"{file} line {number}", f"not a JSON object: {error}"
                ),
            )


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
        }
        for case in cases
    ]
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
