"""What a store checks in an entry before writing it: the target exists and accepts it, the
text is text without a credential, the author is one promptkit knows.

The same credential scanner (`promptkit.secrets.find_secrets`) serves every write and
`check`, so a body that `set` refuses is also what `check` fails on when typed in by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from promptkit.errors import OverridesError
from promptkit.overrides._layout import require_section_path
from promptkit.overrides._shared import ProvenanceValue
from promptkit.overrides._toml_format import AUTHOR_KINDS
from promptkit.prompt import (
    OverrideAuthor,
    Prompt,
    PromptDescriptor,
    PromptOverride,
    SectionDescriptor,
    SectionOverride,
    SectionPath,
    Tool,
    ToolOverride,
)

if TYPE_CHECKING:
    from promptkit.secrets import SecretFinding


def checked_entries(
    descriptor: PromptDescriptor, override: PromptOverride
) -> tuple[dict[SectionPath, SectionOverride], dict[str, ToolOverride]]:
    """The entries of `override`, each checked against `descriptor` (known path that accepts
    overrides, current hash, clean text); OverridesError for the first that is not."""
    if (override.ns, override.prompt_key) != (descriptor.ns, descriptor.key):
        raise OverridesError(
            f"override for {override.ns}/{override.prompt_key} passed with the descriptor of"
            f" {descriptor.ns}/{descriptor.key}; pass the matching prompt's descriptor"
        )
    sections: dict[SectionPath, SectionOverride] = {}
    for raw_path, entry in override.sections.items():
        path = require_section_path(raw_path)
        target = writable_section(descriptor, path)
        if entry.expected_hash != target.content_hash:
            raise OverridesError(
                f"{descriptor.ns}/{descriptor.key} section {'/'.join(path)}: expected_hash"
                f" {entry.expected_hash} does not match the section's current hash"
                f" {target.content_hash}; write against the current code (for instance with"
                " set_section_override); nothing was written"
            )
        where = f"section {'/'.join(path)}"
        if not isinstance(entry.updated_at, datetime) or entry.updated_at.tzinfo is None:
            raise OverridesError(f"{where}: updated_at must be a timezone-aware datetime")
        code_default = entry.code_default
        if code_default is not None and not isinstance(code_default, str):
            raise OverridesError(f"{where}: code_default must be a str or None")
        sections[path] = SectionOverride(
            entry.expected_hash,
            checked_text(entry.body, where=where),
            entry.updated_at.replace(microsecond=0),
            checked_author(entry.source),
            code_default,
        )
    tools: dict[str, ToolOverride] = {}
    for name, tool_entry in override.tools.items():
        tool = descriptor.tool(name)
        if tool is None:
            raise OverridesError(
                f"{descriptor.ns}/{descriptor.key} has no tool {name!r}; nothing was written"
            )
        if tool_entry.expected_contract_hash != tool.contract_hash:
            raise OverridesError(
                f"{descriptor.ns}/{descriptor.key} tool {name}: expected_contract_hash"
                f" {tool_entry.expected_contract_hash} does not match the tool's current"
                f" hash {tool.contract_hash}; nothing was written"
            )
        tools[name] = checked_tool_entry(tool_entry, where=f"tool {name}")
    return sections, tools


def checked_provenance(provenance: Mapping[str, ProvenanceValue] | None, *, where: str) -> None:
    """OverridesError unless every provenance field is text, a flag or notes, credential-free."""
    for key, value in (provenance or {}).items():
        for item in value if isinstance(value, tuple) else (value,):
            if not isinstance(item, str | bool):
                raise OverridesError(f"{where}: provenance {key} must be text, a flag or notes")
            if isinstance(item, str):
                checked_text(item, where=f"{where} provenance {key}")


def credential_text(findings: list[SecretFinding]) -> str:
    """`<rule> on line <n>, ...`: where credentials were found, never what they are."""
    return ", ".join(f"{finding.rule} on line {finding.line}" for finding in findings)


def writable_section(descriptor: PromptDescriptor, path: SectionPath) -> SectionDescriptor:
    target = descriptor.section(path)
    name = f"{descriptor.ns}/{descriptor.key}"
    if target is None:
        writable = [
            "/".join(entry.path) for entry in descriptor.sections if entry.accepts_overrides
        ]
        shown = ", ".join(writable[:12]) + (", ..." if len(writable) > 12 else "")
        raise OverridesError(
            f"prompt {name} has no section at {'/'.join(path)!r} (sections that accept"
            f" overrides: {shown or 'none'}); nothing was written"
        )
    if not target.accepts_overrides:
        raise OverridesError(
            f"prompt {name} section {'/'.join(path)} does not accept overrides; nothing was written"
        )
    return target


def checked_text(text: object, *, where: str) -> str:
    if not isinstance(text, str):
        raise OverridesError(f"{where}: the text must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        # A lone surrogate: bytes that were not UTF-8, decoded with surrogate escapes.
        raise OverridesError(
            f"{where}: the text is not valid Unicode (a lone surrogate at character"
            f" {error.start}: bytes that were not UTF-8); nothing was written"
        ) from None
    # TOML turns a CRLF inside a multi-line string into LF on reading; storing LF keeps the
    # text read back equal to the text written.
    text = text.replace("\r\n", "\n")
    # Imported by the first check: a program that only reads overrides compiles no rule.
    from promptkit.secrets import find_secrets

    findings = find_secrets(text)
    if findings:
        raise OverridesError(
            f"{where}: the text contains what looks like a credential"
            f" ({credential_text(findings)}); remove it and refer to it by name instead;"
            " nothing was written"
        )
    return text


def checked_tool_entry(entry: ToolOverride, *, where: str) -> ToolOverride:
    description = (
        None if entry.description is None else checked_text(entry.description, where=where)
    )
    params: dict[str, str] = {}
    for name, text in entry.param_descriptions.items():
        if not isinstance(name, str) or not name:
            raise OverridesError(f"{where}: parameter names must be non-empty strings")
        params[name] = checked_text(text, where=f"{where} parameter {name}")
    return ToolOverride(entry.expected_contract_hash, description, params)


def checked_author(author: OverrideAuthor) -> OverrideAuthor:
    if not isinstance(author, OverrideAuthor) or author.kind not in AUTHOR_KINDS:
        raise OverridesError(
            f"source must be OverrideAuthor('operator'|'optimizer'|'seed', model), got {author!r}"
        )
    if author.model is not None and not isinstance(author.model, str):
        raise OverridesError(f"source model must be a string, got {author.model!r}")
    return author


def find_tool(prompt: Prompt[Any], name: str) -> Tool[Any] | None:
    tools = (tool for _, section in prompt.iter_sections() for tool in section.tools)
    return next((tool for tool in tools if tool.name == name), None)


def param_descriptions(tool: Tool[Any]) -> dict[str, str]:
    properties = tool.parameters_schema.get("properties", {})
    return {
        name: schema["description"]
        for name, schema in properties.items()
        if isinstance(schema, dict) and isinstance(schema.get("description"), str)
    }
