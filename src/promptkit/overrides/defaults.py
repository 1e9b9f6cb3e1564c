"""The default text of a section as an override would replace it: what `seed` and `diff` use.

Override text is plain text, never evaluated, so seeding a template that reads params would
freeze one rendering of it (or the raw `{{ name }}` source) and lose the params: such sections
are not seeded. A template that reads no params is seeded as it renders today.
"""

from __future__ import annotations

from promptkit.prompt import MarkdownSection, RenderContext, Section, SectionPath
from promptkit.prompt.section import normalize_body


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
