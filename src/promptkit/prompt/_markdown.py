"""`MarkdownSection`: a section whose body is a jinja2 template rendered in a sandbox.

Templates run in a `SandboxedEnvironment` with `StrictUndefined` and autoescaping off (the
output is markdown, not HTML); `trim_blocks` and `lstrip_blocks` keep `{% %}` tags from leaving
blank lines behind. Every name a template reads must be a field of its `params_type`: that is
checked when the Prompt is built.

Most templates are text with `{{ name }}` substitutions and nothing else. Such a template is read
without jinja2 (`plain_substitutions`), which is imported, and the template compiled, at its first
render: a command that only builds a prompt (`promptkit overrides list`) never imports it. Any
other template is parsed and compiled by jinja2 when the section is built, so its errors still
show then.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from promptkit.errors import PromptRenderError, PromptValidationError
from promptkit.prompt._override_types import SectionPath
from promptkit.prompt._params import params_field_names
from promptkit.prompt._section import RenderContext, Section, normalize_body

if TYPE_CHECKING:
    from jinja2 import Template, nodes
    from jinja2.sandbox import SandboxedEnvironment


def _block_filter(text: str) -> str:
    body = normalize_body(text)
    return "\n\n" + body if body else ""


# jinja2 is imported when the first template is parsed, not when promptkit is: a program that
# imports the prompt core without building a MarkdownSection (an overrides store) pays nothing.
@functools.cache
def template_environment() -> SandboxedEnvironment:
    """The one environment every section template is parsed, compiled and rendered in."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    environment = SandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    environment.filters["pk_block"] = _block_filter
    return environment


# Names jinja provides itself inside loops, macros and call blocks; never read from params.
_JINJA_SPECIAL_NAMES = frozenset({"loop", "caller", "varargs", "kwargs", "self", "super"})

# Where jinja's syntax starts: a variable, a statement or a comment.
_SYNTAX_START = re.compile(r"\{[{%#]")
_SUBSTITUTION = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# Names that read as something other than a params field inside `{{ }}`: jinja's constants and
# operators, the environment's globals, and the names jinja binds itself. A template that uses
# one is left to jinja2.
_NOT_PLAIN = frozenset(
    {"true", "false", "none", "True", "False", "None", "not", "and", "or", "in", "is", "if"}
    | {"else", "range", "dict", "lipsum", "cycler", "joiner", "namespace"}
    | _JINJA_SPECIAL_NAMES
)


def plain_substitutions(template: str) -> frozenset[str] | None:
    """The names of a template that is only text and `{{ name }}` substitutions, or None for
    any other template (one with a statement, a comment, a filter, an expression...).

    For a template it answers, jinja2 finds the same names and no error, parsing or compiling
    (tests/prompt/test_templates.py checks it against jinja2 on generated templates).
    """
    names: set[str] = set()
    position = 0
    while (start := _SYNTAX_START.search(template, position)) is not None:
        substitution = _SUBSTITUTION.match(template, start.start())
        if substitution is None or substitution[1] in _NOT_PLAIN:
            return None
        names.add(substitution[1])
        position = substitution.end()
    return frozenset(names)


@dataclass(frozen=True, kw_only=True, eq=False)
class MarkdownSection(Section):
    """A section whose body is `template`, rendered with the fields of its params object."""

    template: str
    _used_names: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.template, str):
            raise PromptValidationError(f"section {self.key!r}: template must be a string")
        used = plain_substitutions(self.template)
        if used is None:
            used = self._checked_by_jinja()
        object.__setattr__(self, "_used_names", used)

    def _checked_by_jinja(self) -> frozenset[str]:
        """Parse and compile the template now, so its errors show when the prompt is built;
        the names it reads from its params."""
        from jinja2 import TemplateSyntaxError, meta

        try:
            ast, _ = self._jinja
        except TemplateSyntaxError as error:
            raise PromptValidationError(
                f"section {self.key!r}: template syntax error on line {error.lineno}:"
                f" {error.message}"
            ) from error
        _refuse_loader_tags(ast, self.key)
        used = meta.find_undeclared_variables(ast) - set(template_environment().globals)
        return frozenset(used - _JINJA_SPECIAL_NAMES)

    @functools.cached_property
    def _jinja(self) -> tuple[nodes.Template, Template]:
        """The template parsed and compiled by jinja2."""
        environment = template_environment()
        return environment.parse(self.template), environment.from_string(self.template)

    @property
    def used_names(self) -> frozenset[str]:
        """Top-level names the template reads from its params object."""
        return self._used_names

    @property
    def template_ast(self) -> nodes.Template:
        """The parsed template; the prompt compiler copies it, never mutates it."""
        return self._jinja[0]

    def original_body_template(self) -> str:
        return self.template

    def validate(self, path: SectionPath) -> None:
        if not self._used_names:
            return
        where = "/".join(path)
        if self.params_type is None:
            raise PromptValidationError(
                f"section {where}: template uses {sorted(self._used_names)} but the section"
                " has no params_type"
            )
        unknown = self._used_names - params_field_names(self.params_type)
        if unknown:
            raise PromptValidationError(
                f"section {where}: template uses {sorted(unknown)}, which"
                f" {self.params_type.__name__} does not define"
            )

    def template_values(self, params: Any) -> dict[str, Any]:
        """The values the template reads, taken from `params`."""
        return {name: getattr(params, name) for name in self._used_names}

    def render_body(self, params: Any, context: RenderContext) -> str:
        try:
            return normalize_body(self._jinja[1].render(self.template_values(params)))
        except Exception as error:  # template code can raise anything; name the section
            raise PromptRenderError(
                f"section {'/'.join(context.path)}: {type(error).__name__}: {error}"
            ) from error


def _refuse_loader_tags(ast: nodes.Template, key: str) -> None:
    # Sections have no template loader and no inheritance: these tags could only fail at render.
    from jinja2 import nodes

    loader_tags: dict[type[nodes.Node], str] = {
        nodes.Block: "{% block %}",
        nodes.Extends: "{% extends %}",
        nodes.Include: "{% include %}",
        nodes.Import: "{% import %}",
        nodes.FromImport: "{% from ... import %}",
    }
    for node_type, tag in loader_tags.items():
        found = next(iter(ast.find_all(node_type)), None)
        if found is not None:
            raise PromptValidationError(
                f"section {key!r}: {tag} on line {found.lineno} is not supported in section"
                " templates (there is no template loader); use a macro or child sections"
            )
