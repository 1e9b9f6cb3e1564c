"""Validation before anything is spent: what an optimize call targets, or why it cannot run.

`prepare_optimization` finds the prompt's `WorkspaceDigestSection` and workspace section, checks
the scope and the overrides arguments, and returns an `OptimizationTarget`; every problem is an
`OptimizationError` that says what is missing and that no request was sent.

The target's mounts are the section's, narrowed by the run's include/exclude globs and without
promptkit's own folders: the overrides store's root and any `leave_out` directory (a state
folder) inside a mount. A digest that counted its own override would change each time it is
written, so two runs on an unchanged tree would not agree.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptkit._names import require_key
from promptkit.digest import WorkspaceDigestSection
from promptkit.errors import OptimizationError
from promptkit.hostfiles import literal_glob
from promptkit.optimize._types import OptimizationScope, OptimizationTarget
from promptkit.overrides import PromptOverridesStore
from promptkit.prompt import Prompt
from promptkit.session import SessionProtocol
from promptkit.workspace import HostMount, WorkspaceSection


def prepare_optimization(
    prompt: Prompt[Any],
    *,
    store_scope: OptimizationScope | str,
    overrides_store: PromptOverridesStore | None,
    overrides_tag: str | None,
    session: SessionProtocol,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    leave_out: Sequence[str | os.PathLike[str]] = (),
) -> OptimizationTarget:
    """Check everything that can be checked before spending anything; OptimizationError names
    what is missing and what to do.

    `include` and `exclude` are globs over paths relative to each mounted directory (as a
    `HostMount`'s are); `leave_out` names directories promptkit writes into (a state folder)
    that the digest must not describe.
    """
    if not isinstance(prompt, Prompt):
        raise OptimizationError(
            f"optimize needs a promptkit Prompt, got {type(prompt).__name__}; no request was sent"
        )
    name = f"{prompt.ns}/{prompt.key}"
    try:
        scope = OptimizationScope(store_scope)
    except ValueError:
        raise OptimizationError(
            f"optimize {name}: unknown store_scope {store_scope!r}; use OptimizationScope.SESSION"
            " or OptimizationScope.GLOBAL; no request was sent"
        ) from None
    if not isinstance(session, SessionProtocol):
        raise OptimizationError(
            f"optimize {name}: session must implement SessionProtocol (a promptkit Session, for"
            f" instance), got {type(session).__name__}; no request was sent"
        )
    digest_section, workspace_section = _sections_of(prompt, name)
    _check_overrides_arguments(scope, overrides_store, overrides_tag, name=name)
    path = prompt.path_of(digest_section)
    assert path is not None  # find_section returned a section of this very prompt
    own_folders = [Path(folder) for folder in leave_out]
    store_root = getattr(overrides_store, "root", None)
    if isinstance(store_root, Path):
        own_folders.append(store_root)
    mounts = tuple(
        _narrowed(mount, include, exclude, own_folders, name=name)
        for mount in _primary_first(workspace_section)
    )
    return OptimizationTarget(
        prompt=prompt,
        digest_section=digest_section,
        digest_path=path,
        workspace_section=workspace_section,
        workspace_root=_workspace_root(workspace_section),
        scope=scope,
        overrides_store=overrides_store,
        overrides_tag=overrides_tag,
        mounts=mounts,
    )


def _sections_of(prompt: Prompt[Any], name: str) -> tuple[WorkspaceDigestSection, WorkspaceSection]:
    """The prompt's digest section and workspace section; OptimizationError when one is missing."""
    digest_section = prompt.find_section(WorkspaceDigestSection)
    if not isinstance(digest_section, WorkspaceDigestSection):
        raise OptimizationError(
            f"optimize {name}: the prompt has no WorkspaceDigestSection, so there is no digest to"
            " write; add WorkspaceDigestSection(session=session) to it; no request was sent"
        )
    workspace_section = prompt.find_section(WorkspaceSection)
    if not isinstance(workspace_section, WorkspaceSection):
        raise OptimizationError(
            f"optimize {name}: the prompt has no workspace section (VfsWorkspaceSection or"
            " PodmanWorkspaceSection), so there is no workspace to describe; add one mounting"
            " the directory the digest is about; no request was sent"
        )
    return digest_section, workspace_section


def _check_overrides_arguments(
    scope: OptimizationScope,
    overrides_store: PromptOverridesStore | None,
    overrides_tag: str | None,
    *,
    name: str,
) -> None:
    """OptimizationError unless the overrides store and tag fit `scope` (GLOBAL needs both)."""
    if scope is OptimizationScope.GLOBAL:
        missing = [
            label
            for label, value in (
                ("overrides_store", overrides_store),
                ("overrides_tag", overrides_tag),
            )
            if value is None
        ]
        if missing:
            raise OptimizationError(
                f"optimize {name} with scope GLOBAL needs overrides_store and overrides_tag"
                f" (missing: {', '.join(missing)}); pass both, or use OptimizationScope.SESSION;"
                " no request was sent"
            )
    if overrides_store is not None and not isinstance(overrides_store, PromptOverridesStore):
        raise OptimizationError(
            f"optimize {name}: overrides_store must be a PromptOverridesStore (for example"
            f" LocalPromptOverridesStore), got {type(overrides_store).__name__};"
            " no request was sent"
        )
    if overrides_tag is not None:
        require_key(overrides_tag, what="overrides_tag", error=OptimizationError)


def _workspace_root(section: WorkspaceSection) -> Path:
    """The host directory the digest describes: the one mounted at `/`, else the first mount."""
    mount = next((m for m in section.mounts if m.mount_path == "/"), section.mounts[0])
    return Path(mount.host_path).expanduser().resolve()


def _primary_first(section: WorkspaceSection) -> list[HostMount]:
    """The mounts with the one the digest's provenance describes (`/`, else the first) first."""
    mounts = list(section.mounts)
    primary = next((m for m in mounts if m.mount_path == "/"), mounts[0])
    return [primary, *(m for m in mounts if m is not primary)]


def _narrowed(
    mount: HostMount,
    include: Sequence[str],
    exclude: Sequence[str],
    own_folders: Sequence[Path],
    *,
    name: str,
) -> HostMount:
    """`mount` with the run's globs added and promptkit's own folders inside it excluded."""
    if include and mount.include_glob:
        raise OptimizationError(
            f"optimize {name}: the mount at {mount.mount_path} has include_glob"
            f" {list(mount.include_glob)} already, so --include cannot narrow it further; narrow"
            " with --exclude, or change the mount's include_glob; no request was sent"
        )
    root = Path(mount.host_path).expanduser().resolve()
    own = [
        literal_glob(relative.as_posix())
        for folder in own_folders
        if (relative := _relative_inside(folder.expanduser().resolve(), root)) is not None
    ]
    return dataclasses.replace(
        mount,
        include_glob=tuple(include) or mount.include_glob,
        exclude_glob=(*mount.exclude_glob, *exclude, *own),
    )


def _relative_inside(folder: Path, root: Path) -> Path | None:
    # The root itself is never left out: a state folder that is the workspace is a mistake the
    # session store reports, not a reason to describe nothing.
    if folder == root or not folder.is_relative_to(root):
        return None
    return folder.relative_to(root)
