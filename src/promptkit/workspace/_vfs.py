"""`WorkspaceSection` and `VfsWorkspaceSection`: prompt sections whose tools explore the host.

A workspace section names its mounts (`HostMount`) and binds to a session. Nothing is read when
it is built, beyond checking that each mount is a directory: the mounts are listed the first
time the section is rendered or a tool runs, and files are read on demand through the overlay
(`promptkit.workspace._overlay`), so a section over a 100,000-file repository costs a listing,
not a copy. `WorkspaceSection` is the base of `VfsWorkspaceSection` and
`PodmanWorkspaceSection`: both offer the same `vfs_*` file tools (`promptkit.workspace._vfs_tools`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from promptkit.errors import ArgumentTypeError, PromptValidationError, WorkspaceError
from promptkit.hostfiles import HOST_READER, WorkspaceReader
from promptkit.prompt import RenderContext, Section, Tool
from promptkit.session import Session
from promptkit.workspace._overlay import (
    DEFAULT_MOUNT_MAX_BYTES,
    HostMount,
    Overlay,
    VfsFile,
    VfsHostCopy,
    VfsMount,
    VfsMountListed,
    forget_listings,
    is_within,
    normalize_vfs_path,
    relist_mounts,
)
from promptkit.workspace._vfs_tools import DEFAULT_GREP_TIMEOUT, VirtualFilesystem, count_noun

__all__ = [
    "DEFAULT_MOUNT_MAX_BYTES",
    "HostMount",
    "VfsFile",
    "VfsHostCopy",
    "VfsMount",
    "VfsMountListed",
    "VfsWorkspaceSection",
    "VirtualFilesystem",
    "WorkspaceSection",
    "forget_listings",
    "normalize_vfs_path",
    "relist_mounts",
]


_MOUNTS_HEADER = "Mounted directories:"


@dataclass(frozen=True, kw_only=True, eq=False)
class WorkspaceSection(Section):
    """Base of the workspace sections: mounts seen through `session` and the `vfs_*` tools.

    The body is the section's guidance (or its override, exactly as stored) followed by the
    list of mounts with how many files each holds. `reader` is the seam every host read goes
    through (default: the host filesystem). `clone(session=...)` requires a Session; the clone
    lists the mounts in that session on first use unless it already holds their listing.
    `mask_credentials=False` lets this section's tool results reach the model with credentials
    in them (they are masked by default; see `promptkit.prompt.mask_tool_result`).
    """

    session: Session
    mounts: Sequence[HostMount]
    title: str = "Workspace"
    key: str = "workspace"
    grep_timeout: float = DEFAULT_GREP_TIMEOUT
    reader: WorkspaceReader = HOST_READER
    mask_credentials: bool = True
    tools: tuple[Tool[Any], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.session, Session):
            raise ArgumentTypeError(
                f"{type(self).__name__} needs session=<a promptkit Session>,"
                f" got {type(self.session).__name__}"
            )
        mounts = (self.mounts,) if isinstance(self.mounts, HostMount) else tuple(self.mounts)
        if not mounts or not all(isinstance(mount, HostMount) for mount in mounts):
            raise PromptValidationError(
                f"section {self.key!r}: mounts must be one or more HostMount values"
            )
        _require_disjoint(mounts, key=self.key)
        if not self.grep_timeout > 0:
            raise PromptValidationError(f"section {self.key!r}: grep_timeout must be positive")
        object.__setattr__(self, "mounts", mounts)
        super().__post_init__()
        self._check_backend()
        # Only whether each mount is a directory is checked now; listing waits for first use.
        for mount in mounts:
            mount.root()
        tools = self.filesystem.tools() + self._backend_tools()
        if not self.mask_credentials:
            tools = tuple(dataclasses.replace(tool, masks_credentials=False) for tool in tools)
        object.__setattr__(self, "tools", tools)

    @property
    def overlay(self) -> Overlay:
        """The session-held view of the mounts: listings, read copies and writes."""
        return Overlay(session=self.session, mounts=tuple(self.mounts), reader=self.reader)

    @property
    def filesystem(self) -> VirtualFilesystem:
        """The virtual filesystem the tools work on."""
        return VirtualFilesystem(
            overlay=self.overlay,
            max_file_bytes=max(mount.max_file_bytes for mount in self.mounts),
            grep_timeout=self.grep_timeout,
        )

    def _check_backend(self) -> None:
        """Raise WorkspaceUnavailableError when the section's backend cannot run here."""

    def _backend_tools(self) -> tuple[Tool[Any], ...]:
        return ()

    def render_body(self, params: Any, context: RenderContext) -> str:
        return self.resolve_body(params, None, context)

    def resolve_body(self, params: Any, override: str | None, context: RenderContext) -> str:
        guidance = override if override is not None else self.original_body_template()
        return f"{guidance}\n\n{self.mounts_description()}"

    def mounts_description(self) -> str:
        """One line per mount: where it is, how many files and bytes it lists, what was left
        out. Lists a mount the session has not listed yet."""
        overlay = self.overlay
        lines = [_MOUNTS_HEADER, ""]
        for mount in self.mounts:
            try:
                record = overlay.listing(mount)
            except WorkspaceError as error:
                lines.append(f"- `{mount.mount_path}`: not available ({error})")
                continue
            line = (
                f"- `{mount.mount_path}`: {count_noun(record.file_count, 'file')},"
                f" {count_noun(record.total_bytes, 'byte')}"
            )
            left_out = sum(count for _, count in record.skipped)
            if left_out:
                reasons = ", ".join(f"{count} {reason}" for reason, count in record.skipped)
                line += f" ({left_out} left out: {reasons})"
            lines.append(line)
        return "\n".join(lines)

    def clone(self, **changes: Any) -> Self:
        """A copy bound to `session=` (required), with any other field changes applied."""
        if not isinstance(changes.get("session"), Session):
            raise ArgumentTypeError(
                f"{type(self).__name__}.clone requires session=<a promptkit Session>: the"
                " workspace overlay lives in one concrete session"
            )
        return super().clone(**changes)


def _require_disjoint(mounts: Sequence[HostMount], *, key: str) -> None:
    paths = [mount.mount_path for mount in mounts]
    for index, first in enumerate(paths):
        for second in paths[index + 1 :]:
            if is_within(first, second) or is_within(second, first):
                raise PromptValidationError(
                    f"section {key!r}: mounts at {first} and {second} overlap; mount each"
                    " directory at its own path (for example /repo and /docs)"
                )


_VFS_GUIDANCE = """\
The workspace is the mounted directories below, read on demand. Explore it with the `vfs_*`
tools instead of guessing: `vfs_list_directory` to see a directory, `vfs_glob` to find files by
name (`**/*.py`), `vfs_grep` to search their lines with a regular expression, and
`vfs_read_file` to read a file in pages of numbered lines (`offset`, `limit`).
`vfs_write_file` changes an overlay only: the host files are never modified. Paths are absolute
(`/src/app.py`) or relative to `/`; paths outside the mounts are refused. Credential files,
binary files and very large files are left out."""


@dataclass(frozen=True, kw_only=True, eq=False)
class VfsWorkspaceSection(WorkspaceSection):
    """The mounted directories as an overlay filesystem in `session`, with the `vfs_*` tools."""

    def original_body_template(self) -> str:
        return _VFS_GUIDANCE
