"""The project's prompts (`[tool.promptkit] prompts`) as MCP prompts, rendered as `render` does.

Each prompt is listed by `ns/key`, with one argument per field of its params types (named
`Type.field` where two types share a field name). MCP passes argument values as strings: a
field whose schema is a string takes the value as it is, any other field takes it as JSON (a
number, a list, an object). The values are validated against the params types
(`params_from_json`) and the prompt is rendered bound to the session stored for the workspace,
with the overrides store and tag, so its digest resolves exactly as `promptkit render` shows it.
The prompts are imported when a client first asks for them; one that cannot be loaded is left
out with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from promptkit.discovery import bind_workspace, project_prompts
from promptkit.errors import PromptkitError
from promptkit.logging import get_logger
from promptkit.prompt import Prompt, params_from_json, type_adapter

if TYPE_CHECKING:
    import mcp_types

    from promptkit.mcp._workspace import WorkspaceService

_log = get_logger("promptkit.mcp")

ListPromptsHandler = Callable[[Any, Any], Awaitable["mcp_types.ListPromptsResult"]]
GetPromptHandler = Callable[
    [Any, "mcp_types.GetPromptRequestParams"], Awaitable["mcp_types.GetPromptResult"]
]


@dataclass(frozen=True)
class PromptArgument:
    """One MCP argument: the params type and field it fills, and whether it is required."""

    name: str
    type_name: str
    field: str
    description: str | None
    is_required: bool
    is_text: bool


@dataclass(frozen=True)
class ListedPrompt:
    """A project prompt as listed: its reference, name, description and arguments."""

    reference: str
    name: str
    description: str
    arguments: tuple[PromptArgument, ...]


class ProjectPrompts:
    """The prompts `service`'s project lists: read from pyproject.toml now, imported and bound
    the first time a client asks for prompts (a project's prompt modules can be slow to import,
    and most agents never ask)."""

    def __init__(self, service: WorkspaceService) -> None:
        self._service = service
        self.references = project_prompts(service.config)

    @cached_property
    def _prompts(self) -> dict[str, ListedPrompt]:
        listed: dict[str, ListedPrompt] = {}
        for reference in self.references:
            try:
                prompt = self._bind(reference)
            except PromptkitError as error:
                _log.warning("mcp_prompt_left_out", reference=reference, error=str(error))
                continue
            name = f"{prompt.ns}/{prompt.key}"
            listed[name] = ListedPrompt(reference, name, _description(prompt), _arguments(prompt))
        return listed

    def _bind(self, reference: str) -> Prompt[Any]:
        options = self._service.options
        return bind_workspace(
            options.path,
            prompt=reference,
            state_dir=options.state_dir,
            overrides_dir=options.overrides_dir,
            tag=options.tag,
            overrides=options.overrides,
            sessions=options.sessions,
        ).prompt

    def render(self, name: str, arguments: Mapping[str, str]) -> str:
        """The text of prompt `name` rendered with `arguments`; PromptRenderError for an unknown
        prompt or argument, or arguments that do not validate against its params types."""
        from promptkit.errors import PromptRenderError

        listed = self._prompts.get(name)
        if listed is None:
            raise PromptRenderError(
                f"no prompt {name!r}: the prompts are {', '.join(self._prompts) or 'none'}"
            )
        options = self._service.options
        bound = bind_workspace(
            options.path,
            prompt=listed.reference,
            state_dir=options.state_dir,
            overrides_dir=options.overrides_dir,
            tag=options.tag,
            overrides=options.overrides,
            sessions=options.sessions,
        )
        known = {argument.name for argument in listed.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise PromptRenderError(
                f"prompt {name}: no argument {', '.join(unknown)} (accepted:"
                f" {', '.join(sorted(known)) or 'none'})"
            )
        document: dict[str, dict[str, Any]] = {}
        for argument in listed.arguments:
            if argument.name in arguments:
                raw = arguments[argument.name]
                document.setdefault(argument.type_name, {})[argument.field] = (
                    raw if argument.is_text else _json_or_text(raw)
                )
        params = params_from_json(bound.prompt.params_types, document, prompt_name=name)
        return bound.prompt.render(*params, overrides_store=bound.overrides, tag=bound.tag).text

    def handlers(self) -> tuple[ListPromptsHandler, GetPromptHandler]:
        """The `prompts/list` and `prompts/get` handlers of the low-level MCP server."""
        import mcp_types

        async def list_prompts(ctx: Any, params: Any) -> mcp_types.ListPromptsResult:
            return mcp_types.ListPromptsResult(
                prompts=[
                    mcp_types.Prompt(
                        name=listed.name,
                        description=listed.description,
                        arguments=[
                            mcp_types.PromptArgument(
                                name=argument.name,
                                description=argument.description,
                                required=argument.is_required,
                            )
                            for argument in listed.arguments
                        ],
                    )
                    for listed in self._prompts.values()
                ]
            )

        async def get_prompt(
            ctx: Any, params: mcp_types.GetPromptRequestParams
        ) -> mcp_types.GetPromptResult:
            import anyio
            from mcp import MCPError

            try:
                text = await anyio.to_thread.run_sync(
                    self.render, params.name, dict(params.arguments or {})
                )
            except PromptkitError as error:
                raise MCPError(code=mcp_types.INVALID_PARAMS, message=str(error)) from None
            return mcp_types.GetPromptResult(
                description=self._prompts[params.name].description,
                messages=[
                    mcp_types.PromptMessage(
                        role="user", content=mcp_types.TextContent(type="text", text=text)
                    )
                ],
            )

        return list_prompts, get_prompt


def _description(prompt: Prompt[Any]) -> str:
    return f"{prompt.display_name}, rendered with the workspace's digest and overrides"


def _arguments(prompt: Prompt[Any]) -> tuple[PromptArgument, ...]:
    fields: list[tuple[str, str, dict[str, Any], bool]] = []
    for params_type in sorted(prompt.params_types, key=lambda kind: kind.__name__):
        schema = type_adapter(params_type).json_schema()
        required = set(schema.get("required", ()))
        for field, field_schema in schema.get("properties", {}).items():
            fields.append((params_type.__name__, field, field_schema, field in required))
    counts: dict[str, int] = {}
    for _, field, _, _ in fields:
        counts[field] = counts.get(field, 0) + 1
    return tuple(
        PromptArgument(
            name=field if counts[field] == 1 else f"{type_name}.{field}",
            type_name=type_name,
            field=field,
            description=field_schema.get("description"),
            is_required=is_required,
            is_text=field_schema.get("type") == "string",
        )
        for type_name, field, field_schema, is_required in fields
    )


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw
