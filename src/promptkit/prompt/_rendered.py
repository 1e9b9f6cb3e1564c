"""What a prompt renders to, and how an overrides store sees a prompt without holding it.

`RenderedPrompt` is a render's result: markdown text, the tools offered, the output type.
`PromptDescriptor` lists a prompt's section paths with content hashes and its tools with
contract hashes: all an overrides store needs to guard its entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from promptkit.prompt._override_types import SectionPath
from promptkit.prompt._tool import Tool

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class SectionDescriptor:
    """A section's path, content hash, and whether it accepts overrides."""

    path: SectionPath
    content_hash: str
    accepts_overrides: bool = True


@dataclass(frozen=True)
class ToolDescriptor:
    """A tool's name and contract hash."""

    name: str
    contract_hash: str


@dataclass(frozen=True)
class PromptDescriptor:
    """What an overrides store needs to know about a prompt, without the prompt itself."""

    ns: str
    key: str
    sections: tuple[SectionDescriptor, ...]
    tools: tuple[ToolDescriptor, ...]

    def section(self, path: SectionPath) -> SectionDescriptor | None:
        """The descriptor of the section at `path`, if the prompt has one."""
        return self._sections_by_path.get(tuple(path))

    @cached_property
    def _sections_by_path(self) -> dict[SectionPath, SectionDescriptor]:
        return {entry.path: entry for entry in self.sections}

    def tool(self, name: str) -> ToolDescriptor | None:
        """The descriptor of the tool called `name`, if the prompt has one."""
        return next((entry for entry in self.tools if entry.name == name), None)


@dataclass(frozen=True)
class RenderedPrompt(Generic[OutputT]):
    """A prompt's markdown text, the tools it offers, and the type its reply must parse into.

    `applied_overrides` lists the sections whose stored override passed the hash guard and was
    handed to the section. Most sections show it as is; a section with a live source of its own
    may still prefer that (a `WorkspaceDigestSection` prefers its session's digest): ask such a
    section where its body came from (`resolve_workspace_digest`).
    """

    text: str
    tools: tuple[Tool[Any], ...]
    output_type: Any
    descriptor: PromptDescriptor
    name: str
    applied_overrides: tuple[SectionPath, ...] = ()

    @property
    def ns(self) -> str:
        return self.descriptor.ns

    @property
    def key(self) -> str:
        return self.descriptor.key

    def tool(self, name: str) -> Tool[Any] | None:
        """The tool called `name`, if this render offers it."""
        return next((tool for tool in self.tools if tool.name == name), None)
