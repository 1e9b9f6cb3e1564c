"""The default text of a section as an override would replace it: what `seed` and `diff` use.

Override text is plain text, never evaluated, so seeding a template that reads params would
freeze one rendering of it (or the raw `{{ name }}` source) and lose the params: such sections
are not seeded. A template that reads no params is seeded as it renders today.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from promptkit.logging import get_logger
from promptkit.overrides._validation import param_descriptions
from promptkit.prompt import (
    MarkdownSection,
    OverrideAuthor,
    Prompt,
    RenderContext,
    Section,
    SectionOverride,
    SectionPath,
    ToolOverride,
    normalize_body,
)

_log = get_logger("promptkit.overrides")

SEED = OverrideAuthor("seed")


def default_body(section: Section, *, ns: str, prompt_key: str, path: SectionPath) -> str:
    """The body the code gives `section` without params: rendered when it reads no params,
    else its template source."""
    if isinstance(section, MarkdownSection) and not section.used_names:
        return section.render_body(None, RenderContext(ns, prompt_key, path))
    return normalize_body(section.original_body_template())


def seed_body(section: Section, *, ns: str, prompt_key: str, path: SectionPath) -> str | None:
    """What `seed` writes for `section`, or None when the section is not seeded.

    Not seeded: sections that do not accept overrides, that opt out with `seedable=False`
    (workspace digests always do), and templates that read params.
    """
    if not (section.accepts_overrides and section.seedable):
        return None
    if isinstance(section, MarkdownSection) and section.used_names:
        return None
    return default_body(section, ns=ns, prompt_key=prompt_key, path=path)


def seed_entries(
    prompt: Prompt[Any], *, now: datetime
) -> tuple[dict[SectionPath, SectionOverride], dict[str, ToolOverride]]:
    """The entries `seed` writes for `prompt`: default bodies and tool descriptions.

    A default that looks like a credential is left out, with a `seed_section_skipped` warning.
    """
    from promptkit.secrets import find_secrets

    sections: dict[SectionPath, SectionOverride] = {}
    tools: dict[str, ToolOverride] = {}
    for path, section in prompt.iter_sections():
        body = seed_body(section, ns=prompt.ns, prompt_key=prompt.key, path=path)
        if body is not None:
            findings = find_secrets(body)
            if findings:
                _log.warning(
                    "seed_section_skipped",
                    ns=prompt.ns,
                    prompt_key=prompt.key,
                    path="/".join(path),
                    reason="credential-like text",
                    rules=sorted({finding.rule for finding in findings}),
                )
            else:
                sections[path] = SectionOverride(section.content_hash, body, now, SEED, body)
        if section.seedable:
            for tool in section.tools:
                tools[tool.name] = ToolOverride(
                    tool.contract_hash, tool.description, param_descriptions(tool)
                )
    return sections, tools
