"""Compiles a prompt's section tree into one jinja2 template per shape.

Rendering twenty small templates costs twenty fixed per-call overheads; one template holding
every section costs one. A *shape* is which sections are included (after `enabled`) and which of
them are rendered inline from their own template rather than given as finished text (overridden
or computed sections). Each section's template is copied into the combined tree with its names
renamed to `pk<index>__<name>`, so sections cannot see or clobber each other's values.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from promptkit.prompt._markdown import MarkdownSection, template_environment
from promptkit.prompt._section import LEADING_BLANK_LINES as _LEADING_BLANK_LINES

if TYPE_CHECKING:
    from jinja2 import Template, nodes

# jinja2 is imported by the functions that build templates: a prompt is planned (`value_name`,
# `body_name`) when it is built, and compiled only when it is first rendered.


@dataclass(frozen=True)
class ShapeEntry:
    """One included section: its place in the tree and how its body arrives."""

    index: int
    depth: int
    title: str
    inline: MarkdownSection | None


def value_name(index: int, name: str) -> str:
    """The combined template's name for `name` in the section at `index`."""
    return f"pk{index}__{name}"


def body_name(index: int) -> str:
    """The combined template's name for a section body given as finished text."""
    return f"pk{index}__body"


def heading_texts(entries: Sequence[ShapeEntry]) -> list[str]:
    """`## 1. Title`, `### 1.1. Title`, ... numbered over the included sections only."""
    counters: list[int] = []
    headings: list[str] = []
    for entry in entries:
        del counters[entry.depth + 1 :]
        while len(counters) <= entry.depth:
            counters.append(0)
        counters[entry.depth] += 1
        number = ".".join(str(count) for count in counters)
        headings.append(f"{'#' * (entry.depth + 2)} {number}. {entry.title}")
    return headings


def compile_shape(entries: Sequence[ShapeEntry]) -> Template:
    """One template that renders every entry, headings included."""
    from jinja2 import nodes

    body: list[nodes.Node] = []
    for position, (entry, heading) in enumerate(zip(entries, heading_texts(entries), strict=True)):
        prefix = "\n\n" if position else ""
        if entry.inline is None:
            body.append(nodes.Output([nodes.TemplateData(prefix + heading)]))
            body.append(nodes.Output([nodes.Name(body_name(entry.index), "load")]))
        else:
            body.extend(_inline_body(entry.index, entry.inline, prefix + heading))
    tree = nodes.Template(body)
    environment = template_environment()
    tree.set_environment(environment)
    return environment.from_string(tree)


def _inline_body(index: int, section: MarkdownSection, heading: str) -> list[nodes.Node]:
    from jinja2 import nodes

    tree = copy.deepcopy(section.template_ast)
    _rename_names(tree, index)
    if _strip_static_edges(tree.body):
        first = tree.body[0]
        assert isinstance(first, nodes.Output)
        first.nodes.insert(0, nodes.TemplateData(heading + "\n\n"))
        return list(tree.body)
    # The body's edges come from values known only at render time: normalise them then.
    block_filter = nodes.Filter(None, "pk_block", [], [], None, None)
    return [nodes.Output([nodes.TemplateData(heading)]), nodes.FilterBlock(tree.body, block_filter)]


# Names jinja itself binds inside loops, macros and call blocks; renaming them would unbind them.
_JINJA_BOUND_NAMES = frozenset({"loop", "caller", "varargs", "kwargs", "self", "super"})


def _rename_names(tree: nodes.Template, index: int) -> None:
    """Give every name the template reads or assigns this section's prefix, in place.

    Globals such as `range` keep their name unless the template assigns them itself, so no
    section can read or overwrite another section's names in the combined template.
    """
    from jinja2 import nodes

    assigned = {
        node.name
        for node in tree.find_all((nodes.Name, nodes.NSRef, nodes.Macro))
        if isinstance(node, nodes.NSRef | nodes.Macro)
        or (isinstance(node, nodes.Name) and node.ctx in ("store", "param"))
    }
    kept = (set(template_environment().globals) - assigned) | _JINJA_BOUND_NAMES
    for node in tree.find_all((nodes.Name, nodes.NSRef, nodes.Macro)):
        if isinstance(node, nodes.Name | nodes.NSRef | nodes.Macro) and node.name not in kept:
            node.name = value_name(index, node.name)


def _strip_static_edges(body: list[nodes.Node]) -> bool:
    """Normalise a body whose first and last output are literal text, in place.

    Returns False (and changes nothing) unless both edges are literal and non-blank, so the
    rendered body is certain to be non-empty and already normalised.
    """
    from jinja2 import nodes

    if not body or not isinstance(body[0], nodes.Output) or not isinstance(body[-1], nodes.Output):
        return False
    first, last = body[0].nodes, body[-1].nodes
    if not (first and last and isinstance(first[0], nodes.TemplateData)):
        return False
    if not isinstance(last[-1], nodes.TemplateData):
        return False
    head = _LEADING_BLANK_LINES.sub("", first[0].data)
    tail = (head if first[0] is last[-1] else last[-1].data).rstrip()
    if not head.strip() or not tail:
        return False
    first[0].data = head
    last[-1].data = tail
    return True
