"""`Prompt`: a namespaced tree of sections that renders to markdown, tools and an output type.

A prompt is validated once, when it is built: keys, template names against params types, tool
names, the output type, and the deps its tools read against the deps type it declares.
Rendering matches params objects to sections by type, applies overrides whose hash still
matches the code, and runs one compiled template per shape of the tree.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar, cast, overload

# A default lets `Prompt[Review]` keep meaning what it did before deps were typed: any deps.
from typing_extensions import TypeVar as DefaultedTypeVar

from promptkit._names import require_key
from promptkit.errors import PromptRenderError, PromptValidationError
from promptkit.logging import get_logger
from promptkit.prompt._applied_overrides import applicable_section_overrides, apply_tool_overrides
from promptkit.prompt._compiler import ShapeEntry, body_name, compile_shape, value_name
from promptkit.prompt._deps import DepsReader, require_call_deps, require_declared_deps
from promptkit.prompt._markdown import MarkdownSection
from promptkit.prompt._override_types import OverridesLookup, PromptOverride, SectionPath
from promptkit.prompt._rendered import (
    PromptDescriptor,
    RenderedPrompt,
    SectionDescriptor,
    ToolDescriptor,
)
from promptkit.prompt._section import RenderContext, Section, normalize_body
from promptkit.prompt._structured import (
    output_example_text,
    output_schema_text,
    require_output_type,
)
from promptkit.prompt._tool import Tool

if TYPE_CHECKING:
    from jinja2 import Template

OutputT = TypeVar("OutputT")
DepsT = DefaultedTypeVar("DepsT", default=Any)
# Unsolved when a prompt is built without `deps_type`: the default makes it `Prompt[X, None]`.
NoDepsT = DefaultedTypeVar("NoDepsT", default=None)

_log = get_logger("promptkit.prompt")
_TRAILING_WHITESPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_SHAPE_CACHE_LIMIT = 64
RESPONSE_FORMAT_KEY = "response-format"


@dataclass(frozen=True, kw_only=True, eq=False)
class _ResponseFormatSection(Section):
    """Appended when a prompt declares an output type: an example reply to fill in, then the
    JSON schema the reply must match (a model shown the schema alone may answer with it).

    Both are built (by pydantic) when the section is first rendered, not when the prompt is: a
    command that only reads a prompt's sections, such as `promptkit overrides list`, never
    needs them.
    """

    output_type: Any = None

    @cached_property
    def schema_text(self) -> str:
        return output_schema_text(self.output_type)

    @cached_property
    def example_text(self) -> str:
        return output_example_text(self.output_type)

    def original_body_template(self) -> str:
        return self.schema_text

    def render_body(self, params: Any, context: RenderContext) -> str:
        return (
            "Reply with one JSON value and nothing else (no prose around it; a fenced ```json"
            " block is accepted). It has the shape of this example; put your answer in place of"
            " each `<...>` placeholder:\n\n"
            f"```json\n{self.example_text}\n```\n\n"
            "The JSON schema below describes the reply (it is not the reply itself):\n\n"
            f"```json\n{self.schema_text}\n```"
        )


@dataclass(frozen=True)
class _PlanNode:
    """A section flattened into render order, with what the render loop needs precomputed."""

    index: int
    section: Section
    path: SectionPath
    depth: int
    subtree_end: int
    default_params: Any
    has_default: bool
    # (combined-template name, params attribute) pairs; None when the body is not inlined.
    bindings: tuple[tuple[str, str], ...] | None


_MISSING = object()


def _is_inlinable(section: Section) -> TypeGuard[MarkdownSection]:
    """A MarkdownSection whose body is exactly its template can join the combined template."""
    section_type = type(section)
    return (
        isinstance(section, MarkdownSection)
        and section_type.render_body is MarkdownSection.render_body
        and section_type.resolve_body is Section.resolve_body
    )


@dataclass(frozen=True, kw_only=True, eq=False)
class Prompt(Generic[OutputT, DepsT]):
    """A namespaced, keyed tree of sections with an optional structured output type and the
    type of the deps its tools read.

    `ns` is one or more `/`-separated segments; `ns`, `key` and every section key follow the
    key rule. `deps_type` is the type of the value a call passes as `deps` for the tools'
    handlers: every tool whose handler reads deps (`ToolContext[Deps]`) must be able to use it,
    and a prompt whose tools read deps must declare it. Construction validates the whole tree
    and raises `PromptValidationError`.
    """

    ns: str
    key: str
    name: str | None = None
    sections: tuple[Section, ...] = ()
    output_type: Any = None
    deps_type: Any = None
    _plan: tuple[_PlanNode, ...] = field(init=False, repr=False)
    _params_types: frozenset[type[Any]] = field(init=False, repr=False)
    _shapes: dict[tuple[int, ...], Template] = field(init=False, repr=False)
    _shapes_lock: threading.Lock = field(init=False, repr=False)
    # Set when every section is an inline template with no `enabled`: the shape never varies.
    _static_shape: tuple[int, ...] | None = field(init=False, repr=False)

    if TYPE_CHECKING:
        # Type checkers infer `Prompt[Review, Repo]` from `output_type=Review` and
        # `deps_type=Repo`, `None` for either left out, so no annotation is needed. At run time
        # the dataclass generates `__init__` as usual (it keeps an `__init__` the class
        # defines, and these exist only for type checkers).
        @overload
        def __init__(
            self: Prompt[None, NoDepsT],
            *,
            ns: str,
            key: str,
            name: str | None = None,
            sections: Sequence[Section] = (),
            output_type: None = None,
            deps_type: type[NoDepsT] | None = None,
        ) -> None: ...

        @overload
        def __init__(
            self: Prompt[OutputT, NoDepsT],
            *,
            ns: str,
            key: str,
            name: str | None = None,
            sections: Sequence[Section] = (),
            output_type: type[OutputT],
            deps_type: type[NoDepsT] | None = None,
        ) -> None: ...

        def __init__(
            self,
            *,
            ns: str,
            key: str,
            name: str | None = None,
            sections: Sequence[Section] = (),
            output_type: Any = None,
            deps_type: Any = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        if not isinstance(self.ns, str) or not self.ns:
            raise PromptValidationError(f"invalid prompt ns {self.ns!r}: expected segments")
        for segment in self.ns.split("/"):
            require_key(
                segment, what=f"segment of prompt ns {self.ns!r}", error=PromptValidationError
            )
        require_key(self.key, what="prompt key", error=PromptValidationError)
        object.__setattr__(self, "sections", tuple(self.sections))
        sections = self.sections
        if self.output_type is not None:
            require_output_type(self.output_type)
            if any(section.key == RESPONSE_FORMAT_KEY for section in sections):
                raise PromptValidationError(
                    f"prompt {self.ns}/{self.key}: the top-level key {RESPONSE_FORMAT_KEY!r} is"
                    " reserved for the response format section of prompts with an output_type"
                )
            sections = (*sections, self._response_format_section())
        plan: list[_PlanNode] = []
        self._plan_sections(sections, (), plan)
        object.__setattr__(self, "_plan", tuple(plan))
        object.__setattr__(
            self,
            "_params_types",
            frozenset(node.section.params_type for node in plan if node.section.params_type),
        )
        object.__setattr__(self, "_shapes", {})
        object.__setattr__(self, "_shapes_lock", threading.Lock())
        is_static = all(n.bindings is not None and n.section.enabled is None for n in plan)
        object.__setattr__(self, "_static_shape", tuple(range(len(plan))) if is_static else None)
        self._require_unique_tool_names()
        require_declared_deps(f"prompt {self.ns}/{self.key}", self.deps_type, self._deps_readers)

    # -- construction -------------------------------------------------------------------------

    def _response_format_section(self) -> Section:
        return _ResponseFormatSection(
            title="Response Format",
            key=RESPONSE_FORMAT_KEY,
            accepts_overrides=False,
            seedable=False,
            output_type=self.output_type,
        )

    def _plan_sections(
        self, sections: tuple[Section, ...], parent: SectionPath, plan: list[_PlanNode]
    ) -> None:
        seen: set[str] = set()
        for section in sections:
            if not isinstance(section, Section):
                raise PromptValidationError(
                    f"prompt {self.ns}/{self.key}: sections must be Section objects,"
                    f" got {type(section).__name__}"
                )
            if section.key in seen:
                where = "/".join(parent) or f"prompt {self.ns}/{self.key}"
                raise PromptValidationError(f"{where}: two sections share the key {section.key!r}")
            seen.add(section.key)
            path = (*parent, section.key)
            section.validate(path)
            default = self._default_params(section)
            index = len(plan)
            bindings = (
                tuple((value_name(index, name), name) for name in sorted(section.used_names))
                if _is_inlinable(section)
                else None
            )
            plan.append(_PlanNode(index, section, path, len(parent), 0, default, True, bindings))
            self._plan_sections(section.children, path, plan)
            plan[index] = _PlanNode(
                index,
                section,
                path,
                len(parent),
                len(plan),
                default,
                default is not _MISSING,
                bindings,
            )

    @staticmethod
    def _default_params(section: Section) -> Any:
        if section.params_type is None:
            return None
        if section.default_params is not None:
            return section.default_params
        try:
            return section.params_type()
        except Exception:  # any failure means the type has no usable no-argument default
            return _MISSING

    def _require_unique_tool_names(self) -> None:
        owners: dict[str, SectionPath] = {}
        for node in self._plan:
            for tool in node.section.tools:
                if tool.name in owners:
                    raise PromptValidationError(
                        f"prompt {self.ns}/{self.key}: tool {tool.name!r} is defined by both"
                        f" {'/'.join(owners[tool.name])} and {'/'.join(node.path)}"
                    )
                owners[tool.name] = node.path

    @cached_property
    def _deps_readers(self) -> tuple[DepsReader, ...]:
        return tuple(
            DepsReader(tool.name, node.path, tool.deps_need)
            for node in self._plan
            for tool in node.section.tools
            if tool.deps_need is not None
        )

    def require_deps(self, deps: object) -> None:
        """Raise `DepsError` unless `deps` is what a call of this prompt must pass: a value of
        `deps_type` (None only when the prompt declares none, or a type that allows it)."""
        require_call_deps(f"prompt {self.ns}/{self.key}", self.deps_type, self._deps_readers, deps)

    # -- introspection ------------------------------------------------------------------------

    @property
    def params_types(self) -> frozenset[type[Any]]:
        """The params types the prompt's sections read; `render` matches params to them."""
        return self._params_types

    @property
    def display_name(self) -> str:
        """`name` when given, else `ns/key`."""
        return self.name or f"{self.ns}/{self.key}"

    @cached_property
    def descriptor(self) -> PromptDescriptor:
        """Paths with content hashes and tools with contract hashes, in render order."""
        return PromptDescriptor(
            ns=self.ns,
            key=self.key,
            sections=tuple(
                SectionDescriptor(
                    node.path, node.section.content_hash, node.section.accepts_overrides
                )
                for node in self._plan
                if not isinstance(node.section, _ResponseFormatSection)
            ),
            tools=tuple(
                ToolDescriptor(tool.name, tool.contract_hash)
                for node in self._plan
                for tool in node.section.tools
            ),
        )

    def iter_sections(self) -> Iterator[tuple[SectionPath, Section]]:
        """Every section with its path, in render order (the response format excluded)."""
        for node in self._plan:
            if not isinstance(node.section, _ResponseFormatSection):
                yield node.path, node.section

    def section_at(self, path: SectionPath) -> Section | None:
        """The section at `path`, if any."""
        return next((s for p, s in self.iter_sections() if p == tuple(path)), None)

    def find_section(self, section_type: type[Any]) -> Any:
        """The first section of `section_type` in render order, or None."""
        return next((s for _, s in self.iter_sections() if isinstance(s, section_type)), None)

    def path_of(self, section: Section) -> SectionPath | None:
        """The path of `section` (the object itself) in this prompt, if it is part of it."""
        return next((p for p, s in self.iter_sections() if s is section), None)

    # -- rendering ----------------------------------------------------------------------------

    def render(
        self,
        *params: Any,
        overrides_store: OverridesLookup | None = None,
        tag: str = "latest",
    ) -> RenderedPrompt[OutputT]:
        """Render with `params` matched to sections by type, applying fresh overrides."""
        by_type = self._match_params(params)
        override = overrides_store.resolve(self.descriptor, tag) if overrides_store else None
        section_bodies = applicable_section_overrides(self.descriptor, override)
        if self._static_shape is not None and not section_bodies:
            return self._render_static(self._static_shape, by_type, override)
        values: dict[str, Any] = {}
        shape: list[int] = []
        tools: list[Tool[Any, Any]] = []
        applied: list[SectionPath] = []
        plan = self._plan
        index = 0
        while index < len(plan):
            node = plan[index]
            section = node.section
            section_params = (
                by_type.get(section.params_type, _MISSING) if section.params_type else None
            )
            if section_params is _MISSING:
                section_params = self._default_for(node)
            if section.enabled is not None and not section.enabled(section_params):
                index = node.subtree_end
                continue
            if section.tools:
                tools.extend(section.tools)
            body_override = section_bodies.get(node.path) if section_bodies else None
            if body_override is None and node.bindings is not None:
                shape.append(index)
                for value_key, attribute in node.bindings:
                    values[value_key] = getattr(section_params, attribute)
            else:
                if body_override is not None:
                    applied.append(node.path)
                context = RenderContext(self.ns, self.key, node.path, overrides_store, tag)
                body = normalize_body(section.resolve_body(section_params, body_override, context))
                values[body_name(index)] = "\n\n" + body if body else ""
                shape.append(~index)
            index += 1
        text = self._render_shape(tuple(shape), values, by_type)
        return RenderedPrompt(
            text=text,
            tools=apply_tool_overrides(self.descriptor, tuple(tools), override),
            output_type=self.output_type,
            descriptor=self.descriptor,
            name=self.display_name,
            applied_overrides=tuple(applied),
        )

    def _render_static(
        self,
        shape: tuple[int, ...],
        by_type: Mapping[type[Any], Any],
        override: PromptOverride | None,
    ) -> RenderedPrompt[OutputT]:
        values: dict[str, Any] = {}
        for node in self._plan:
            params_type = node.section.params_type
            section_params = by_type.get(params_type, _MISSING) if params_type else None
            if section_params is _MISSING:
                section_params = self._default_for(node)
            for value_key, attribute in node.bindings or ():
                values[value_key] = getattr(section_params, attribute)
        return RenderedPrompt(
            text=self._render_shape(shape, values, by_type),
            tools=apply_tool_overrides(self.descriptor, self._all_tools, override),
            output_type=self.output_type,
            descriptor=self.descriptor,
            name=self.display_name,
        )

    @cached_property
    def _all_tools(self) -> tuple[Tool[Any, Any], ...]:
        return tuple(tool for node in self._plan for tool in node.section.tools)

    def _match_params(self, params: tuple[Any, ...]) -> Mapping[type[Any], Any]:
        by_type: dict[type[Any], Any] = {}
        for value in params:
            value_type = type(value)
            if value_type not in self._params_types:
                accepted = ", ".join(sorted(t.__name__ for t in self._params_types)) or "none"
                raise PromptRenderError(
                    f"prompt {self.ns}/{self.key}: no section takes params of type"
                    f" {value_type.__name__} (accepted: {accepted})"
                )
            if value_type in by_type:
                raise PromptRenderError(
                    f"prompt {self.ns}/{self.key}: two params objects of type"
                    f" {value_type.__name__}; pass one per type"
                )
            by_type[value_type] = value
        return by_type

    def _params_for(self, node: _PlanNode, by_type: Mapping[type[Any], Any]) -> Any:
        params_type = node.section.params_type
        if params_type is None:
            return None
        given = by_type.get(params_type, _MISSING)
        return self._default_for(node) if given is _MISSING else given

    def _default_for(self, node: _PlanNode) -> Any:
        if node.has_default:
            return node.default_params
        params_type = node.section.params_type
        assert params_type is not None
        raise PromptRenderError(
            f"section {'/'.join(node.path)} of prompt {self.ns}/{self.key}: no params of type"
            f" {params_type.__name__} were passed, the section has no default_params, and"
            f" {params_type.__name__}() needs arguments"
        )

    def _render_shape(
        self, shape: tuple[int, ...], values: dict[str, Any], by_type: Mapping[type[Any], Any]
    ) -> str:
        template = self._shapes.get(shape)
        if template is None:
            template = self._compile(shape)
        try:
            # Template.render would copy `values` first; the dict is ours and used once.
            text = "".join(template.root_render_func(template.new_context(values)))
        except Exception as error:  # template code can raise anything; name the section
            raise self._locate_render_error(shape, by_type, error) from error
        if " \n" in text or "\t\n" in text or text.endswith((" ", "\t")):
            text = _TRAILING_WHITESPACE.sub("", text)
        return text

    def _compile(self, shape: tuple[int, ...]) -> Template:
        entries = []
        for signed in shape:
            index = signed if signed >= 0 else ~signed
            node = self._plan[index]
            inline = cast(MarkdownSection, node.section) if signed >= 0 else None
            entries.append(ShapeEntry(index, node.depth, node.section.title, inline))
        template = compile_shape(entries)
        with self._shapes_lock:
            if len(self._shapes) >= _SHAPE_CACHE_LIMIT:
                self._shapes.pop(next(iter(self._shapes)))
            self._shapes[shape] = template
        return template

    def _locate_render_error(
        self, shape: tuple[int, ...], by_type: Mapping[type[Any], Any], error: Exception
    ) -> PromptRenderError:
        """Re-render the inlined sections one by one to name the one that failed."""
        for index in shape:
            if index < 0:
                continue
            node = self._plan[index]
            context = RenderContext(self.ns, self.key, node.path)
            try:
                node.section.render_body(self._params_for(node, by_type), context)
            except PromptRenderError as located:
                return located
        return PromptRenderError(f"prompt {self.ns}/{self.key}: {type(error).__name__}: {error}")
