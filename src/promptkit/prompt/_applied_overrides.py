"""Applying a stored `PromptOverride` to a prompt: which section bodies and tool texts to use.

The hash guard lives here: an override written against other code is logged and skipped, so a
code change never renders text that described the old code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptkit.logging import get_logger
from promptkit.prompt._override_types import PromptOverride, SectionPath
from promptkit.prompt._rendered import PromptDescriptor
from promptkit.prompt._tool import Tool

_log = get_logger("promptkit.prompt")


def applicable_section_overrides(
    descriptor: PromptDescriptor, override: PromptOverride | None
) -> Mapping[SectionPath, str]:
    """Section bodies from `override` whose hash still matches the code, by section path.

    An entry for a missing section, or one that refuses overrides, is skipped (debug log); a
    stale entry is skipped with a warning naming both hashes.
    """
    if override is None or not override.sections:
        return {}
    bodies: dict[SectionPath, str] = {}
    for path, entry in override.sections.items():
        target = descriptor.section(path)
        if target is None or not target.accepts_overrides:
            _log.debug(
                "override_not_applicable",
                ns=descriptor.ns,
                prompt_key=descriptor.key,
                tag=override.tag,
                path="/".join(path),
                location=override.location,
            )
        elif entry.expected_hash != target.content_hash:
            _log.warning(
                "override_stale",
                ns=descriptor.ns,
                prompt_key=descriptor.key,
                tag=override.tag,
                path="/".join(path),
                location=override.location,
                override_hash=entry.expected_hash,
                code_hash=target.content_hash,
            )
        else:
            bodies[target.path] = entry.body
    return bodies


def apply_tool_overrides(
    descriptor: PromptDescriptor, tools: tuple[Tool[Any], ...], override: PromptOverride | None
) -> tuple[Tool[Any], ...]:
    """`tools` with the descriptions of fresh tool overrides applied; stale ones are skipped."""
    if override is None or not override.tools:
        return tools
    result: list[Tool[Any]] = []
    for tool in tools:
        entry = override.tools.get(tool.name)
        if entry is None:
            result.append(tool)
        elif entry.expected_contract_hash != tool.contract_hash:
            _log.warning(
                "tool_override_stale",
                ns=descriptor.ns,
                prompt_key=descriptor.key,
                tag=override.tag,
                tool=tool.name,
                location=override.location,
                override_hash=entry.expected_contract_hash,
                code_hash=tool.contract_hash,
            )
            result.append(tool)
        else:
            known = tool.parameters_schema.get("properties", {})
            unknown = sorted(set(entry.param_descriptions) - set(known))
            if unknown:
                # Hand-edited files can name parameters the tool lacks; the rest still apply.
                _log.warning(
                    "tool_override_unknown_parameters",
                    ns=descriptor.ns,
                    prompt_key=descriptor.key,
                    tag=override.tag,
                    tool=tool.name,
                    location=override.location,
                    parameters=unknown,
                )
            result.append(
                tool.with_overrides(
                    description=entry.description,
                    param_descriptions={
                        name: text
                        for name, text in entry.param_descriptions.items()
                        if name in known
                    },
                )
            )
    return tuple(result)
