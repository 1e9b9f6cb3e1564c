"""What `promptkit mcp serve` offers, in promptkit's own terms: `Tool`s and a digest report.

Nothing here speaks MCP (`promptkit.mcp._server` does); everything here is promptkit's existing
code, reused so the MCP server cannot drift from the command line:

- the digest resolves with `bind_workspace` and `resolve_workspace_digest`, as `promptkit render`
  resolves it (the session stored for the workspace, the prompt's override, a shared override,
  the placeholder), bound afresh for every request so a digest stored meanwhile is seen;
- the file tools are the read-only `vfs_*` tools of a `VfsWorkspaceSection` over the prompt's
  mounts (or the workspace itself), with their confinement, left-out files, credential masking,
  size bounds and grep time limit; each call gets an overlay of its own, so it lists and reads the
  host as it is now (an agent edits files between calls);
- the refresh runs `optimize_workspace_digest` with the static writer unless another provider was
  configured. A read-only server (the default) keeps the new digest in a throwaway session and
  only returns it; with `allow_writes` it is stored in the workspace's session, as
  `promptkit optimize --provider static` stores it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from promptkit.digest import DigestResolution, WorkspaceDigestSection, resolve_workspace_digest
from promptkit.discovery import BoundWorkspace, bind_prompt, bind_workspace
from promptkit.errors import PromptValidationError
from promptkit.overrides import DocumentOverridesStore
from promptkit.prompt import Prompt, Tool, ToolContext, ToolResult
from promptkit.repl import freshness_text
from promptkit.session import Session, SessionStoreProtocol
from promptkit.workspace import HostMount, VfsWorkspaceSection, WorkspaceSection

DIGEST_TOOL = "workspace_digest"
REFRESH_TOOL = "refresh_workspace_digest"
# The `vfs_*` tools that only read: `vfs_write_file` is never offered (it would write an overlay
# that lives for one call).
READ_ONLY_FILE_TOOLS = ("vfs_list_directory", "vfs_read_file", "vfs_glob", "vfs_grep")
DEFAULT_REFRESH_PROVIDER = "static"


@dataclass(frozen=True)
class ServeOptions:
    """What `promptkit mcp serve` was asked to serve: the workspace options every workspace
    command takes, whether the server may store a refreshed digest (`allow_writes`), who
    writes a refreshed digest (`refresh_provider`, `static` unless configured), and the stores
    an application binds (`overrides`, `sessions`: used unless a folder option names one)."""

    path: str | None = None
    prompt: str | None = None
    tag: str | None = None
    state_dir: str | None = None
    overrides_dir: str | None = None
    allow_writes: bool = False
    refresh_provider: str = DEFAULT_REFRESH_PROVIDER
    overrides: DocumentOverridesStore[Any] | None = None
    sessions: SessionStoreProtocol | None = None


@dataclass(frozen=True)
class DigestReport:
    """A resolved digest as the server hands it out: the body, and the facts about it."""

    resolution: DigestResolution
    facts: Mapping[str, Any]

    @property
    def text(self) -> str:
        """The facts, one `name: value` line each, a blank line, then the digest."""
        lines = [f"{name}: {value}" for name, value in self.facts.items() if value is not None]
        return "\n".join([*lines, "", self.resolution.body])


class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorkspaceService:
    """The workspace a server serves: resolves its digest and runs its tools.

    Built once per server: the workspace and prompt are checked now (PromptValidationError or
    WorkspaceError, before anything is served), and the prompt must have a
    `WorkspaceDigestSection`.
    """

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        bound = self.bind()
        if not isinstance(
            bound.prompt.find_section(WorkspaceDigestSection), WorkspaceDigestSection
        ):
            raise PromptValidationError(
                f"prompt {bound.prompt.ns}/{bound.prompt.key} has no WorkspaceDigestSection, so"
                " there is no digest to serve: pass --prompt naming a prompt with one"
            )
        self.workspace: Path = bound.workspace
        self.config = bound.config
        self._mounts = _mounts_of(bound.prompt, bound.workspace)

    def bind(self) -> BoundWorkspace:
        """The prompt bound to the session stored for the workspace now (as `render` binds it)."""
        return bind_workspace(
            self.options.path,
            prompt=self.options.prompt,
            state_dir=self.options.state_dir,
            overrides_dir=self.options.overrides_dir,
            tag=self.options.tag,
            overrides=self.options.overrides,
            sessions=self.options.sessions,
        )

    def digest(self) -> DigestReport:
        """The digest `promptkit render` would show now, with where it came from and whether
        the workspace changed since it was written."""
        bound = self.bind()
        resolution = resolve_workspace_digest(
            bound.prompt, overrides_store=bound.overrides, tag=bound.tag
        )
        session = bound.stored_session
        freshness = resolution.freshness
        facts: dict[str, Any] = {
            "workspace": str(bound.workspace),
            "prompt": f"{bound.prompt.ns}/{bound.prompt.key}",
            "section_key": resolution.section_key,
            "origin": resolution.origin,
            "session_id": session.session_id
            if session is not None and resolution.origin == "session"
            else None,
            "updated_at": resolution.updated_at.isoformat() if resolution.updated_at else None,
            "author": resolution.author,
            "is_stale": resolution.is_stale,
            "freshness": freshness_text(resolution),
            "stale_reason": freshness.reason if freshness and freshness.is_stale else None,
            # A reviewed override the session's digest hides, as a render logs it.
            "shadowed_override": resolution.shadowed_override,
        }
        if resolution.origin == "placeholder":
            facts["hint"] = f"no digest is stored yet: call {REFRESH_TOOL} to write one"
        elif resolution.is_stale:
            facts["hint"] = f"the workspace changed since: call {REFRESH_TOOL} for a fresh digest"
        return DigestReport(resolution, facts)

    def tools(self) -> tuple[Tool[Any], ...]:
        """The digest tool, the read-only file tools and the refresh tool."""
        digest = Tool(
            name=DIGEST_TOOL,
            description="The workspace digest: a summary of this repository (layout, tooling,"
            " commands, conventions) with where it came from and whether the repository changed"
            " since it was written. Read it before exploring the files.",
            params_type=_NoParams,
            handler=self._digest_tool,
        )
        refresh = Tool(
            name=REFRESH_TOOL,
            description=self._refresh_description(),
            params_type=_NoParams,
            handler=self._refresh_tool,
        )
        return (digest, *self._file_tools(), refresh)

    @property
    def refresh_stores(self) -> bool:
        """Whether the refresh tool stores the digest it writes (the server allows writes)."""
        return self.options.allow_writes

    def _refresh_description(self) -> str:
        writer = (
            "the offline static scan (no model call)"
            if self.options.refresh_provider == DEFAULT_REFRESH_PROVIDER
            else f"the configured provider ({self.options.refresh_provider})"
        )
        stored = (
            "and stores it in the workspace's session, so later reads and `promptkit render` use it"
            if self.options.allow_writes
            else "and returns it without storing it (this server is read-only)"
        )
        return f"Write a fresh workspace digest with {writer} {stored}."

    def _digest_tool(self, params: _NoParams, context: ToolContext) -> ToolResult:
        report = self.digest()
        return ToolResult(message=report.text, value=dict(report.facts))

    def _file_tools(self) -> tuple[Tool[Any], ...]:
        template = self._filesystem_section(Session())
        return tuple(
            dataclasses.replace(tool, handler=partial(self._run_file_tool, tool.name))
            for tool in template.filesystem.tools()
            if tool.name in READ_ONLY_FILE_TOOLS
        )

    def _filesystem_section(self, session: Session) -> VfsWorkspaceSection:
        return VfsWorkspaceSection(session=session, mounts=self._mounts)

    def _run_file_tool(self, name: str, params: Any, context: ToolContext) -> ToolResult:
        # A new overlay per call: the listing and the files are the host's as they are now.
        section = self._filesystem_section(Session())
        tool = next(tool for tool in section.filesystem.tools() if tool.name == name)
        result = tool.handler(params, context)
        assert isinstance(result, ToolResult)  # the vfs handlers are plain functions
        return result

    def _refresh_tool(self, params: _NoParams, context: ToolContext) -> ToolResult:
        from promptkit.optimize import (
            OptimizationScope,
            choose_digest_writer,
            optimize_workspace_digest,
        )

        writer = choose_digest_writer(self.options.refresh_provider).writer
        bound = self.bind()
        if not self.options.allow_writes:
            throwaway = Session()
            prompt = bind_prompt(
                _source_of(self.options), session=throwaway, workspace=bound.workspace
            )
            result = optimize_workspace_digest(
                writer,
                prompt,
                store_scope=OptimizationScope.SESSION,
                session=throwaway,
                leave_out=bound.sessions.state_folders,
                deadline=context.remaining_s(),
            )
            return ToolResult(
                message=f"origin: refreshed now by {writer.provider}, not stored (this server is"
                " read-only: start it with --allow-writes to store refreshed digests)\n\n"
                f"{result.digest}",
                value={"stored": False, "provider": writer.provider, "digest": result.digest},
            )
        attachment = (
            bound.sessions.attach(bound.session, bound.workspace)
            if bound.stored_session is not None
            else None
        )
        try:
            result = optimize_workspace_digest(
                writer,
                bound.prompt,
                store_scope=OptimizationScope.SESSION,
                session=bound.session,
                leave_out=bound.sessions.state_folders,
                deadline=context.remaining_s(),
            )
            if attachment is None:
                attachment = bound.sessions.attach(bound.session, bound.workspace)
        finally:
            if attachment is not None:
                attachment.close()
        report = self.digest()
        return ToolResult(
            message=f"stored a digest written by {writer.provider} in session"
            f" {bound.session.session_id}\n{report.text}",
            value={"stored": True, "provider": writer.provider, **report.facts},
        )


def _source_of(options: ServeOptions) -> Any:
    from promptkit.discovery import DEFAULT_PROMPT_REFERENCE, load_prompt_source

    return load_prompt_source(options.prompt or DEFAULT_PROMPT_REFERENCE)


def _mounts_of(prompt: Prompt[Any], workspace: Path) -> tuple[HostMount, ...]:
    """The mounts of the prompt's workspace section (VFS or Podman: the file tools read the host
    either way), or the workspace directory itself when the prompt has none."""
    section = prompt.find_section(WorkspaceSection)
    if isinstance(section, WorkspaceSection):
        return tuple(section.mounts)
    return (HostMount(workspace),)
