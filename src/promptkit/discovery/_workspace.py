"""What the commands work on: the project configuration with their options, and the workspace.

Every command's options (`PATH`, `--prompt`, `--state-dir`, `--overrides-dir`, `--tag`, the
provider options) resolve against the project's `[tool.promptkit]` table with one rule for
every command (`promptkit.config.command_config`: a flag wins, else the table, else the
default). For the workspace commands (`optimize`, `render`, `digest`, `repl`, `mcp serve`)
that gives the directory, the prompt source (`promptkit.discovery._references`), the session
store and the overrides store (`promptkit.discovery._stores`), and `bind_workspace` binds the
prompt to the session most recently stored for the workspace. The built-in default prompt,
`workspace_prompt`, is a factory: a short role, the workspace as a VFS, planning tools and the
workspace digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptkit.config import ProjectConfig, command_config
from promptkit.digest import WorkspaceDigestSection
from promptkit.discovery._references import (
    PromptSource,
    bind_prompt,
    load_prompt_source,
    use_project,
)
from promptkit.discovery._stores import overrides_store_of, session_store_of
from promptkit.errors import WorkspaceError
from promptkit.overrides import DocumentOverridesStore
from promptkit.planning import PlanningToolsSection
from promptkit.prompt import Prompt, TextSection
from promptkit.session import Session, SessionStoreProtocol
from promptkit.workspace import HostMount, VfsWorkspaceSection

DEFAULT_PROMPT_REFERENCE = "promptkit.discovery:workspace_prompt"

_ROLE = """\
You are an assistant working in the software repository mounted below. Read the workspace
digest first, confirm what you rely on in the files themselves, and say what you could not
confirm rather than guessing."""


def workspace_prompt(session: Session, workspace: Path) -> Prompt[Any]:
    """The default prompt of the workspace commands: ns `promptkit`, key `workspace`."""
    return Prompt(
        ns="promptkit",
        key="workspace",
        name="promptkit workspace prompt",
        sections=(
            TextSection(title="Role", key="role", text=_ROLE),
            VfsWorkspaceSection(session=session, mounts=[HostMount(workspace)]),
            PlanningToolsSection(session=session),
            WorkspaceDigestSection(session=session),
        ),
    )


def existing_workspace(path: str | Path) -> Path:
    """`path` resolved, or WorkspaceError (exit status 2) when it is not a directory."""
    workspace = Path(path).expanduser()
    if not workspace.is_dir():
        what = "does not exist" if not workspace.exists() else "is not a directory"
        raise WorkspaceError(f"workspace {workspace} {what}: pass the repository's directory")
    return workspace.resolve()


@dataclass(frozen=True)
class WorkspaceOptions:
    """What the shared options name: the project configuration they resolve to, the workspace
    directory, the prompt source (imported, not bound yet), the session store, the overrides
    store and the tag."""

    config: ProjectConfig
    workspace: Path
    prompt_source: PromptSource
    sessions: SessionStoreProtocol
    overrides: DocumentOverridesStore[Any]
    tag: str


def workspace_options(
    path: str | None,
    *,
    prompt: str | PromptSource | None,
    state_dir: str | None = None,
    overrides_dir: str | None = None,
    tag: str | None = None,
    overrides: DocumentOverridesStore[Any] | None = None,
    sessions: SessionStoreProtocol | None = None,
) -> WorkspaceOptions:
    """Resolve `PATH` (None: the project's workspace), `--prompt` (a reference, a source given
    in code, or None for the default prompt), `--state-dir`, `--overrides-dir` and `--tag`
    against the project configuration (`command_config`). `overrides` and `sessions`, stores an
    application binds, take the place of the configured ones unless the folder is given.
    WorkspaceError when PATH is not a directory, PromptValidationError when the reference does
    not resolve, ConfigError for a configuration that cannot be used."""
    config = command_config(
        workspace=path, overrides_dir=overrides_dir, state_dir=state_dir, tag=tag
    )
    workspace = existing_workspace(config.workspace_root)
    use_project(config)
    # Imported before any session loads: the prompt's module registers its slice types.
    if prompt is None or isinstance(prompt, str):
        source = load_prompt_source(prompt or DEFAULT_PROMPT_REFERENCE)
    else:
        source = prompt
    if overrides is None or overrides_dir is not None:
        overrides = overrides_store_of(config)
    if sessions is None or state_dir is not None:
        sessions = session_store_of(config)
    return WorkspaceOptions(
        config=config,
        workspace=workspace,
        prompt_source=source,
        sessions=sessions,
        overrides=overrides,
        tag=config.tag,
    )


@dataclass(frozen=True)
class BoundWorkspace:
    """What a workspace command works on: the directory, its session store, the session most
    recently stored for it (`stored_session`, None when there was none and `session` is new),
    the prompt bound to that session, the overrides store and the tag, and the project
    configuration they come from."""

    config: ProjectConfig
    workspace: Path
    sessions: SessionStoreProtocol
    stored_session: Session | None
    session: Session
    prompt: Prompt[Any]
    overrides: DocumentOverridesStore[Any]
    tag: str


def bind_workspace(
    path: str | None,
    *,
    prompt: str | None,
    state_dir: str | None = None,
    overrides_dir: str | None = None,
    tag: str | None = None,
    overrides: DocumentOverridesStore[Any] | None = None,
    sessions: SessionStoreProtocol | None = None,
) -> BoundWorkspace:
    """`workspace_options`, then the prompt bound to the workspace's latest stored session (or a
    new one)."""
    options = workspace_options(
        path,
        prompt=prompt,
        state_dir=state_dir,
        overrides_dir=overrides_dir,
        tag=tag,
        overrides=overrides,
        sessions=sessions,
    )
    return bind_options(options)


def bind_options(options: WorkspaceOptions) -> BoundWorkspace:
    """The prompt of `options` bound to the workspace's latest stored session (or a new one)."""
    stored = options.sessions.latest(options.workspace)
    session = stored if stored is not None else Session()
    return BoundWorkspace(
        config=options.config,
        workspace=options.workspace,
        sessions=options.sessions,
        stored_session=stored,
        session=session,
        prompt=bind_prompt(options.prompt_source, session=session, workspace=options.workspace),
        overrides=options.overrides,
        tag=options.tag,
    )
