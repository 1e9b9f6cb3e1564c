"""A stock-keeping tool whose handler reads typed deps, shared by the tests of applications,
evaluations and reply scripts: `Shelf` (the deps), `Item` (the tool's params) and
`count_tool()`, whose handler answers the shelf's count of the item (KeyError for an item the
shelf does not hold)."""

from dataclasses import dataclass

from pydantic import BaseModel

from promptkit import Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Shelf:
    counts: dict[str, int]


class Item(BaseModel):
    name: str


def count(params: Item, context: ToolContext[Shelf]) -> ToolResult:
    return ToolResult(message=str(context.deps.counts[params.name]))


def count_tool() -> Tool[Item, Shelf]:
    return Tool(name="count", description="Stock.", params_type=Item, handler=count)
