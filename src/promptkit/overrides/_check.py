"""Checking stored overrides against the code: every file's validity and every entry's hash.

`check_overrides` never stops at the first problem. It reports, each with its file and line:
a file that cannot be used (malformed, special, too large, outside the root), a credential
typed into a body (the same scanner as `set` refuses with), and each entry that is stale,
names a path the prompt does not have, or targets a section that does not accept overrides.
A file whose prompt was not given cannot be checked for staleness, which is a problem too
unless `syntax_only`. A file written by a promotion is also read against its evidence (kind
`evidence`): an entry edited since, evidence edited since, a dataset changed since. It is what
`promptkit overrides check` runs in CI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from promptkit.overrides._documents import DocumentOverridesStore
from promptkit.overrides._files import OverrideFileError
from promptkit.overrides._layout import escaping_folders
from promptkit.overrides._local import LocalPromptOverridesStore
from promptkit.overrides._promotion import PROMOTION_TABLE, promotion_problems
from promptkit.overrides._shared import SharedSectionOverride
from promptkit.overrides._toml_format import key_line, table_header_line, table_line
from promptkit.overrides._validation import credential_text
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


ProblemKind = Literal["invalid", "credential", "entry", "unchecked", "evidence"]


@dataclass(frozen=True)
class OverrideProblem:
    """One problem found by `check_overrides`: the file, the line when known, and what.

    `kind` is `invalid` (the file cannot be used), `credential`, `entry` (see `entry`),
    `unchecked` (no prompt to compare the file with) or `evidence` (the promoted text or its
    evidence changed since the promotion).
    """

    file: str
    message: str
    line: int | None = None
    entry: EntryState | None = None
    kind: ProblemKind = "invalid"

    def __str__(self) -> str:
        where = f"{self.file} line {self.line}" if self.line else self.file
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """The problem as a JSON object (what `overrides check --json` prints)."""
        document: dict[str, Any] = {
            "file": self.file,
            "line": self.line,
            "kind": self.kind,
            "message": self.message,
        }
        if self.entry is not None:
            document["entry"] = {
                "table": self.entry.table,
                "name": self.entry.name,
                "status": self.entry.status,
                "prompt": self.entry.prompt,
                "override_hash": self.entry.override_hash,
                "code_hash": self.entry.code_hash,
            }
        return document


def entry_states(prompt: Prompt[Any], override: PromptOverride) -> tuple[EntryState, ...]:
    """The state of every entry of `override` against `prompt`, sections first."""
    # The sections themselves, not `prompt.descriptor`: that also hashes every tool's contract,
    # which builds each tool's JSON schema, and only the tools with entries need theirs.
    name = f"{prompt.ns}/{prompt.key}"
    states: list[EntryState] = []
    for path, entry in sorted(override.sections.items()):
        target = prompt.section_at(path)
        status: EntryStatus
        if target is None:
            status = "unknown"
        elif not target.accepts_overrides:
            status = "not-accepted"
        else:
            status = "fresh" if target.content_hash == entry.expected_hash else "stale"
        code_hash = target.content_hash if target is not None else None
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


def check_overrides(
    root: str | Path | DocumentOverridesStore[Any],
    prompts: Iterable[Prompt[Any]] = (),
    *,
    syntax_only: bool = False,
) -> tuple[OverrideProblem, ...]:
    """Every problem of the overrides folder `root` (or of a store's documents): unusable
    documents, credentials, and entries that do not fit `prompts` (see the module doc). With
    `syntax_only`, documents are checked for validity and credentials only, whichever prompts
    are given.
    """
    known = {(prompt.ns, prompt.key): prompt for prompt in prompts}
    if isinstance(root, DocumentOverridesStore):
        store: DocumentOverridesStore[Any] = root
    else:
        store = LocalPromptOverridesStore(Path(root), strict_overrides=True)
    problems: list[OverrideProblem] = []
    if isinstance(store, LocalPromptOverridesStore):
        problems.extend(
            OverrideProblem(
                str(folder),
                f"a symlink to a folder outside the overrides root {store.root}; its files are"
                " not read (replace it with a real folder)",
            )
            for folder in escaping_folders(store.root)
        )
    for document in store.read_documents():
        location, value, text = document.location, document.value, document.text
        error = document.error
        if isinstance(error, OverrideFileError):
            problems.append(OverrideProblem(error.file, error.reason, error.line))
            continue
        if error is not None:  # a document in a place that fits no override
            problems.append(OverrideProblem(location, str(error).removeprefix(f"{location}: ")))
            continue
        if value is None or text is None:
            continue
        problems.extend(_credential_problems(location, text))
        if isinstance(value, PromptOverride):
            problems.extend(_evidence_problems(location, text, value, store.files_root))
        if not syntax_only:
            problems.extend(_entry_problems(location, text, value, known))
    return tuple(problems)


def _credential_problems(file: str, text: str) -> list[OverrideProblem]:
    from promptkit.secrets import find_secrets

    findings = find_secrets(text)
    return [
        OverrideProblem(
            file,
            f"looks like a credential ({credential_text([finding])}); remove it from the file"
            " and refer to it by name instead",
            finding.line,
            kind="credential",
        )
        for finding in findings
    ]


def _evidence_problems(
    file: str, text: str, value: PromptOverride, root: Path
) -> list[OverrideProblem]:
    line = table_header_line(text.splitlines(), PROMOTION_TABLE) if value.promotion else None
    return [
        OverrideProblem(file, message, line, kind="evidence")
        for message in promotion_problems(value, root=root)
    ]


def _entry_problems(
    file: str,
    text: str,
    value: PromptOverride | SharedSectionOverride,
    known: dict[tuple[str, str], Prompt[Any]],
) -> list[OverrideProblem]:
    lines = text.splitlines()
    if isinstance(value, SharedSectionOverride):
        states = shared_states(known.values(), value)
        if not states:
            return [
                OverrideProblem(
                    file,
                    f"no prompt given has a section {value.section_key!r}, so whether this"
                    f" shared entry applies cannot be checked; {_PROMPT_HINT}",
                    kind="unchecked",
                )
            ]
        line = key_line(lines, "expected_hash")
        return [
            OverrideProblem(
                file,
                f"shared {value.section_key} (used by {state.prompt} {state.name}):"
                f" {state.describe()}",
                line,
                state,
                kind="entry",
            )
            for state in states
            if state.is_problem
        ]
    prompt = known.get((value.ns, value.prompt_key))
    if prompt is None:
        return [
            OverrideProblem(
                file,
                f"prompt {value.ns}/{value.prompt_key} was not found, so its entries cannot be"
                f" checked for staleness; {_PROMPT_HINT}",
                kind="unchecked",
            )
        ]
    return [
        OverrideProblem(
            file,
            f'{state.table}."{state.name}": {state.describe()}',
            table_line(lines, state.table, state.name),
            state,
            kind="entry",
        )
        for state in entry_states(prompt, value)
        if state.is_problem
    ]


_PROMPT_HINT = (
    "pass --prompt, register a promptkit.prompts entry point, or list it under"
    " [tool.promptkit] prompts in pyproject.toml (or check with --syntax-only)"
)
