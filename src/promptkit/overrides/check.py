"""Checking stored overrides against the code: every file's validity and every entry's hash.

`check_overrides` never stops at the first problem: it reports each invalid file, and each
entry that is stale, names a path the prompt does not have, or targets a section that does not
accept overrides, for every prompt it was given. It is what `promptkit overrides check` runs
in CI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from promptkit.errors import OverridesError
from promptkit.overrides.layout import override_files
from promptkit.overrides.local import LocalPromptOverridesStore
from promptkit.overrides.shared import SharedSectionOverride
from promptkit.overrides.toml_format import FIX_HINT, table_line
from promptkit.prompt import Prompt, PromptOverride

EntryStatus = Literal["fresh", "stale", "unknown", "not-accepted", "unknown-params"]


@dataclass(frozen=True)
class EntryState:
    """How one stored entry relates to the code: fresh, stale, unknown path, or not accepted.

    `table` and `name` locate it in the file (`sections` and `intro/child`, or `tools` and a
    tool name); `prompt` is the `ns/key` it was compared with. `unknown_params` lists the
    parameter descriptions of a tool entry that name no parameter of the tool.
    """

    table: Literal["sections", "tools"]
    name: str
    status: EntryStatus
    prompt: str
    override_hash: str
    code_hash: str | None = None
    unknown_params: tuple[str, ...] = ()

    @property
    def is_problem(self) -> bool:
        return self.status != "fresh"

    def describe(self) -> str:
        """One line saying what is wrong with the entry (or that it is fresh)."""
        what = "section" if self.table == "sections" else "tool"
        if self.status == "stale":
            return (
                f"stale: written for hash {self.override_hash}, the code of {self.prompt} now"
                f" has hash {self.code_hash}"
            )
        if self.status == "unknown":
            return (
                f"{self.prompt} has no {what} {self.name!r} (hash in file {self.override_hash});"
                " remove the entry if no deployment uses it"
            )
        if self.status == "not-accepted":
            return f"section {self.name} of {self.prompt} does not accept overrides"
        if self.status == "unknown-params":
            return (
                f"tool {self.name} of {self.prompt} has no parameters named"
                f" {list(self.unknown_params)}; remove them from param_descriptions"
            )
        return f"fresh (hash {self.override_hash})"


@dataclass(frozen=True)
class OverrideProblem:
    """One problem found by `check_overrides`: the file, the line when known, and what."""

    file: str
    message: str
    line: int | None = None
    entry: EntryState | None = None

    def __str__(self) -> str:
        where = f"{self.file} line {self.line}" if self.line else self.file
        return f"{where}: {self.message}"


def entry_states(prompt: Prompt[Any], override: PromptOverride) -> tuple[EntryState, ...]:
    """The state of every entry of `override` against `prompt`, sections first."""
    descriptor = prompt.descriptor
    name = f"{prompt.ns}/{prompt.key}"
    states: list[EntryState] = []
    for path, entry in sorted(override.sections.items()):
        target = descriptor.section(path)
        status: EntryStatus
        if target is None:
            status = "unknown"
        elif not target.accepts_overrides:
            status = "not-accepted"
        else:
            status = "fresh" if target.content_hash == entry.expected_hash else "stale"
        code_hash = target.content_hash if target else None
        states.append(
            EntryState("sections", "/".join(path), status, name, entry.expected_hash, code_hash)
        )
    tools = {tool.name: tool for _, section in prompt.iter_sections() for tool in section.tools}
    for tool_name, tool_entry in sorted(override.tools.items()):
        tool = tools.get(tool_name)
        unknown_params: tuple[str, ...] = ()
        if tool is None:
            status = "unknown"
        elif tool.contract_hash != tool_entry.expected_contract_hash:
            status = "stale"
        else:
            known = tool.parameters_schema.get("properties", {})
            unknown_params = tuple(sorted(set(tool_entry.param_descriptions) - set(known)))
            status = "unknown-params" if unknown_params else "fresh"
        states.append(
            EntryState(
                "tools",
                tool_name,
                status,
                name,
                tool_entry.expected_contract_hash,
                tool.contract_hash if tool else None,
                unknown_params,
            )
        )
    return tuple(states)


def shared_states(
    prompts: Iterable[Prompt[Any]], shared: SharedSectionOverride
) -> tuple[EntryState, ...]:
    """The state of a shared entry for each prompt with a section of its key."""
    states: list[EntryState] = []
    for prompt in prompts:
        for path, section in prompt.iter_sections():
            if path[-1] != shared.section_key:
                continue
            status: EntryStatus
            if not section.accepts_overrides:
                status = "not-accepted"
            elif section.content_hash == shared.entry.expected_hash:
                status = "fresh"
            else:
                status = "stale"
            states.append(
                EntryState(
                    "sections",
                    "/".join(path),
                    status,
                    f"{prompt.ns}/{prompt.key}",
                    shared.entry.expected_hash,
                    section.content_hash,
                )
            )
    return tuple(states)


def _file_problem(file: Path, error: OverridesError) -> OverrideProblem:
    message = str(error).removesuffix(f" ({FIX_HINT})")
    located = re.match(rf"{re.escape(str(file))}(?: line (\d+))?: ", message)
    if located is None:
        return OverrideProblem(str(file), message)
    line = int(located.group(1)) if located.group(1) else None
    return OverrideProblem(str(file), message[located.end() :], line)


def check_overrides(
    root: str | Path, prompts: Iterable[Prompt[Any]] = ()
) -> tuple[OverrideProblem, ...]:
    """Every problem under `root`: invalid files, and entries that do not fit `prompts`.

    Files of prompts not in `prompts` are only checked for validity (parse, header, fields).
    """
    root_path = Path(root)
    known = {(prompt.ns, prompt.key): prompt for prompt in prompts}
    store = LocalPromptOverridesStore(root_path)
    problems: list[OverrideProblem] = []
    for file in override_files(root_path):
        try:
            value = store.read_file(file)
        except OverridesError as error:
            problems.append(_file_problem(file, error))
            continue
        if isinstance(value, PromptOverride):
            prompt = known.get((value.ns, value.prompt_key))
            states = entry_states(prompt, value) if prompt else ()
        elif isinstance(value, SharedSectionOverride):
            states = shared_states(known.values(), value)
        else:
            continue
        lines: list[str] | None = None
        for state in states:
            if not state.is_problem:
                continue
            if lines is None:
                lines = file.read_text(encoding="utf-8").splitlines()
            if isinstance(value, SharedSectionOverride):
                label = f"shared {value.section_key} (used by {state.prompt} {state.name})"
                line = None
            else:
                label = f'{state.table}."{state.name}"'
                line = table_line(lines, state.table, state.name)
            problems.append(OverrideProblem(str(file), f"{label}: {state.describe()}", line, state))
    return tuple(problems)
