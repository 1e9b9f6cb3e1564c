"""Tool results across the MCP boundary, both ways, bounded in bytes before anything else.

A promptkit `ToolResult` becomes an MCP `CallToolResult` (the message as one text block, the
value as structured content) when our server answers; an MCP `CallToolResult` becomes a
`ToolResult` when a prompt calls another server's tool. Either way the text is cut to a byte
limit first, so a result of any size costs at most that much to mask, log or send on: the same
limit the tool loop applies to promptkit's own tools. Only text reaches the model: images,
audio and binary resources are named with their size, never decoded.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from promptkit.prompt import ToolResult

if TYPE_CHECKING:
    import mcp_types

MAX_RESULT_BYTES = 256 * 1024
"""The most UTF-8 bytes of a tool result's text (and of its structured value) passed on."""


def bounded_text(text: str, limit: int = MAX_RESULT_BYTES) -> str:
    """`text` cut to `limit` UTF-8 bytes (on a character boundary), with a note saying so."""
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= limit:
        return text
    kept = encoded[:limit].decode("utf-8", errors="ignore")
    return (
        f"{kept}\n[promptkit truncated this result: {len(encoded):,} bytes, the first"
        f" {limit:,} shown; ask for less at a time]"
    )


def bounded_value(value: Any, limit: int = MAX_RESULT_BYTES) -> Any:
    """`value` when its JSON form is within `limit` bytes, else None (the text still says it)."""
    if value is None:
        return None
    try:
        size = len(json.dumps(value, default=str).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return None
    return value if size <= limit else None


def to_mcp_result(result: ToolResult, limit: int = MAX_RESULT_BYTES) -> mcp_types.CallToolResult:
    """Our tool's result as an MCP result: one text block, a dict value as structured content."""
    import mcp_types

    value = bounded_value(result.value, limit) if isinstance(result.value, dict) else None
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=bounded_text(result.message, limit))],
        structured_content=value,
        is_error=not result.success,
    )


def from_mcp_result(result: mcp_types.CallToolResult, limit: int = MAX_RESULT_BYTES) -> ToolResult:
    """Another server's result as a `ToolResult`: its text blocks joined (each other block named
    by kind and size), its structured content as the value; `isError` makes it a failure."""
    parts: list[str] = []
    used = 0
    for block in result.content:
        if used > limit:
            parts.append("[more content not shown]")
            break
        text = _block_text(block)
        parts.append(text)
        used += len(text)
    value = bounded_value(result.structured_content, limit)
    message = "\n".join(parts)
    if not message.strip() and value is not None:
        message = json.dumps(value, ensure_ascii=False)
    if not message.strip():
        message = "the tool returned no content" if not result.is_error else ""
    return ToolResult(
        message=bounded_text(message, limit), value=value, success=not result.is_error
    )


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} ({block.mime_type}, {len(block.data) * 3 // 4:,} bytes) not shown]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri}]\n{text}"
        return f"[binary resource {resource.uri} ({resource.mime_type}) not shown]"
    if kind == "resource_link":
        return f"[resource link {block.uri}]"
    return f"[{kind or 'unknown'} content not shown]"
