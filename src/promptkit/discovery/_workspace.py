"""What the workspace commands (`optimize`, `render`, `digest status`, `repl`) work on.

Their shared options (`PATH`, `--prompt`, `--state-dir`, `--overrides-dir`) resolve here: the
directory, the prompt source (`promptkit.discovery._references`), the session store and the
overrides store; `bind_workspace` then binds the prompt to the session most recently stored for
the workspace. The built-in default prompt, `workspace_prompt`, is a factory: a short role, the
workspace as a VFS, planning tools and the workspace digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptkit.digest import WorkspaceDigestSection
from promptkit.discovery._references import PromptSource, bind_prompt, load_prompt_source
from promptkit.errors import WorkspaceError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.planning import PlanningToolsSection
from promptkit.prompt import Prompt, TextSection
from promptkit.session import Session, SessionStore
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


def existing_workspace(path: str) -> Path:
    """`path` resolved, or WorkspaceError (exit status 2) when it is not a directory."""
    workspace = Path(path).expanduser()
    if not workspace.is_dir():
        what = "does not exist" if not workspace.exists() else "is not a directory"
        raise WorkspaceError(f"workspace {workspace} {what}: pass the repository's directory")
    return workspace.resolve()


@dataclass(frozen=True)
class WorkspaceOptions:
    """What the shared options name: the workspace directory, the prompt source (imported, not
    bound yet), the session store and the overrides store (default PATH/overrides)."""

    workspace: Path
    prompt_source: PromptSource
    sessions: SessionStore
    overrides: LocalPromptOverridesStore


def workspace_options(
    path: str,
    *,
    prompt: str | PromptSource | None,
    state_dir: str | None,
    overrides_dir: str | None,
) -> WorkspaceOptions:
    """Resolve `PATH`, `--prompt` (a reference, a source given in code, or None for the default
    prompt), `--state-dir` and `--overrides-dir`; WorkspaceError when PATH is not a directory,
    PromptValidationError when the reference does not resolve."""
    workspace = existing_workspace(path)
    # Imported before any session loads: the prompt's module registers its slice types.
    if prompt is None or isinstance(prompt, str):
        source = load_prompt_source(prompt or DEFAULT_PROMPT_REFERENCE)
    else:
        source = prompt
    return WorkspaceOptions(
        workspace=workspace,
        prompt_source=source,
        sessions=SessionStore(state_dir),
        overrides=LocalPromptOverridesStore(
            Path(overrides_dir) if overrides_dir else workspace / "overrides"
        ),
    )


@dataclass(frozen=True)
class BoundWorkspace:
    """What a workspace command works on: the directory, its session store, the session most
    recently stored for it (`stored_session`, None when there was none and `session` is new),
    the prompt bound to that session, and the overrides store."""

    workspace: Path
    sessions: SessionStore
    stored_session: Session | None
    session: Session
    prompt: Prompt[Any]
    overrides: LocalPromptOverridesStore


def bind_workspace(
    path: str, *, prompt: str | None, state_dir: str | None, overrides_dir: str | None
) -> BoundWorkspace:
    """`workspace_options`, then the prompt bound to the workspace's latest stored session (or a
    new one)."""
    options = workspace_options(
        path, prompt=prompt, state_dir=state_dir, overrides_dir=overrides_dir
    )
    stored = options.sessions.latest(options.workspace)
    session = stored if stored is not None else Session()
    return BoundWorkspace(
        workspace=options.workspace,
        sessions=options.sessions,
        stored_session=stored,
        session=session,
        prompt=bind_prompt(options.prompt_source, session=session, workspace=options.workspace),
        overrides=options.overrides,
    )
