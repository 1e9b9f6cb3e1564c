"""The prompt the workspace commands (`optimize`, `render`) work on, and how `--prompt` finds it.

These prompts bind to a Session and a workspace directory, so `--prompt module:attr` names
either a factory `(session, workspace) -> Prompt`, which is called with the command's session
and workspace, or a ready `Prompt`, whose session-bound sections are re-bound to the command's
session (its mounts stay as written). The built-in default, `workspace_prompt`, is a factory:
a short role, the workspace as a VFS, planning tools and the workspace digest.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptkit.cli.optimize import existing_workspace
from promptkit.digest import WorkspaceDigestSection
from promptkit.errors import PromptValidationError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.planning import PlanningToolsSection
from promptkit.prompt import Prompt, Section, TextSection
from promptkit.session import Session, SessionStore
from promptkit.workspace.vfs import HostMount, VfsWorkspaceSection

DEFAULT_PROMPT_REFERENCE = "promptkit.cli.workspace_prompt:workspace_prompt"

PromptFactory = Callable[..., Prompt[Any]]
"""`(session, workspace) -> Prompt`, or a function of no arguments returning a Prompt."""

_ROLE = """\
You are an assistant working in the software repository mounted below. Read the workspace
digest first, confirm what you rely on in the files themselves, and say what you could not
confirm rather than guessing."""


def workspace_prompt(session: Session, workspace: Path) -> Prompt[Any]:
    """The default prompt of `promptkit optimize` and `render`: ns `promptkit`, key `workspace`."""
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
    """Resolve the options every workspace command shares (`PATH`, `--prompt`, `--state-dir`,
    `--overrides-dir`); WorkspaceError when PATH is not a directory."""
    workspace = existing_workspace(path)
    # Imported before the session loads: the prompt's module registers its slice types.
    source = import_prompt_source(prompt)
    sessions = SessionStore(state_dir)
    stored = sessions.latest(workspace)
    session = stored if stored is not None else Session()
    return BoundWorkspace(
        workspace=workspace,
        sessions=sessions,
        stored_session=stored,
        session=session,
        prompt=bind_prompt(source, session, workspace),
        overrides=LocalPromptOverridesStore(
            Path(overrides_dir) if overrides_dir else workspace / "overrides"
        ),
    )


def import_prompt_source(reference: str | None) -> Prompt[Any] | PromptFactory:
    """What `--prompt module:attr` names (the default prompt when None), imported but not
    called yet: importing first registers the module's slice types before a session loads."""
    spec = reference or DEFAULT_PROMPT_REFERENCE
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise PromptValidationError(
            f"--prompt {spec!r}: expected MODULE:ATTR, for example myapp.prompts:review_prompt"
        )
    # As with `python -m`, the current folder is importable: a project's prompts are found
    # when the command runs from its root.
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise PromptValidationError(f"--prompt {spec!r}: {error}") from error
    if isinstance(value, Prompt) or callable(value):
        found: Prompt[Any] | PromptFactory = value
        return found
    raise PromptValidationError(
        f"--prompt {spec!r} is a {type(value).__name__}: name a Prompt or a function"
        " (session, workspace) -> Prompt"
    )


def bind_prompt(
    source: Prompt[Any] | PromptFactory, session: Session, workspace: Path
) -> Prompt[Any]:
    """The prompt bound to `session`: the factory's result, or a ready prompt re-bound."""
    if isinstance(source, Prompt):
        return Prompt(
            ns=source.ns,
            key=source.key,
            name=source.name,
            sections=tuple(_rebound(section, session) for section in source.sections),
            output_type=source.output_type,
        )
    takes_arguments = bool(inspect.signature(source).parameters)
    prompt = source(session, workspace) if takes_arguments else source()
    if not isinstance(prompt, Prompt):
        raise PromptValidationError(
            f"--prompt factory {getattr(source, '__qualname__', source)!r} returned a"
            f" {type(prompt).__name__}, not a Prompt"
        )
    return prompt


def _rebound(section: Section, session: Session) -> Section:
    children = tuple(_rebound(child, session) for child in section.children)
    changes: dict[str, Any] = {}
    if any(a is not b for a, b in zip(children, section.children, strict=True)):
        changes["children"] = children
    if any(field.name == "session" for field in dataclasses.fields(section)):
        changes["session"] = session
    return section.clone(**changes) if changes else section
