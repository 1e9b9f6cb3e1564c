"""The VFS as an overlay over the host: mounts listed, files read on demand, writes kept apart.

`HostMount` names a host directory and where it appears in the virtual filesystem. The first
time a session needs a mount, its listing is recorded (`VfsMount`: path, size and version of
every file `select_files` allows; no content is read). A file is read from the host only when a
tool asks for it, through `read_host_text`, the one read path of the VFS: the confined reader
(`promptkit.hostfiles._reading`, which re-checks root confinement and refuses links out of the
root at read time), the per-file size cap, and the binary check. What was read is kept
(`VfsHostCopy`) so a tool loop sees one version of each file, up to the mount's `max_bytes`;
past that budget files are still read but not kept, and the tool result says so.

`vfs_write_file` lands in `VfsFile` values only: the host is never modified. `VfsFile` is a
persisted slice, so a session restored from disk keeps the model's writes; the listing and the
read copies are in memory only, and a restored session lists its mounts again on first use.

The listing is a snapshot: a host file created after it is not visible until the mount is
listed again (`relist_mounts`), while a listed file is read as it is on the host when first
read. Every VFS path is normalised first (`normalize_vfs_path`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from promptkit._gc import collector_paused
from promptkit.errors import ArgumentValueError, PromptValidationError, WorkspaceError
from promptkit.hostfiles import (
    DEFAULT_MAX_FILE_BYTES,
    HOST_READER,
    WorkspaceReader,
    resolve_workspace_root,
    select_files,
)
from promptkit.session import (
    Session,
    register_in_memory_slice_type,
    register_slice_type,
    upsert_by,
)

if TYPE_CHECKING:
    from promptkit.hostfiles import FileSelection, ListingSummary, WorkspaceFile

__all__ = [
    "DEFAULT_MOUNT_MAX_BYTES",
    "BinaryFileError",
    "HostMount",
    "Overlay",
    "VfsFile",
    "VfsHostCopy",
    "VfsMount",
    "VfsMountListed",
    "forget_listings",
    "is_within",
    "normalize_vfs_path",
    "read_host_text",
    "record_counted_listing",
    "record_listing",
    "relist_mounts",
]

DEFAULT_MOUNT_MAX_BYTES = 32 * 1024 * 1024


def normalize_vfs_path(raw: str, *, base: str = "/") -> str:
    """`raw` as an absolute, normalised VFS path; relative paths start at `base`.

    `.` and empty segments are dropped and `..` removes one segment; WorkspaceError when `..`
    would climb above `/` or the path holds a NUL byte.
    """
    if not isinstance(raw, str):
        raise WorkspaceError(f"a path must be text, got {type(raw).__name__}")
    if "\0" in raw:
        raise WorkspaceError(f"path {raw!r} contains a NUL byte")
    text = raw.strip()
    segments: list[str] = [] if text.startswith("/") else _segments(base)
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not segments:
                raise WorkspaceError(
                    f"path {raw!r} climbs above the workspace root with '..': paths stay"
                    " inside the mounted workspace"
                )
            segments.pop()
        else:
            segments.append(part)
    return "/" + "/".join(segments)


def _segments(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def is_within(path: str, directory: str) -> bool:
    """Whether VFS `path` is `directory` or under it."""
    return directory == "/" or path == directory or path.startswith(directory + "/")


@dataclass(frozen=True)
class HostMount:
    """A host directory shown in the virtual filesystem at `mount_path`.

    `include_glob` (when given) and `exclude_glob` filter files by their path relative to
    `host_path` (`*` stays within a directory, `**` spans directories; an exclude matching a
    directory leaves out everything under it). `max_file_bytes` caps each file (larger files
    are left out, like binaries and credential files); `max_bytes` caps the host bytes a session
    keeps of this mount once read (files past it are still read, but not kept).
    """

    host_path: str | os.PathLike[str]
    mount_path: str = "/"
    include_glob: tuple[str, ...] = ()
    exclude_glob: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MOUNT_MAX_BYTES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_path", os.fspath(self.host_path))
        try:
            mount_path = normalize_vfs_path(self.mount_path)
        except WorkspaceError as error:
            raise PromptValidationError(f"HostMount mount_path: {error}") from None
        object.__setattr__(self, "mount_path", mount_path)
        for name in ("include_glob", "exclude_glob"):
            value = getattr(self, name)
            globs = (value,) if isinstance(value, str) else tuple(value)
            if not all(isinstance(glob, str) and glob for glob in globs):
                raise PromptValidationError(f"HostMount {name} must be non-empty glob strings")
            object.__setattr__(self, name, globs)
        if self.max_bytes <= 0 or self.max_file_bytes <= 0:
            raise PromptValidationError(
                f"HostMount {self.host_path}: max_bytes and max_file_bytes must be positive"
            )

    def root(self) -> Path:
        """The host directory, resolved; WorkspaceError when it is not a directory."""
        return resolve_workspace_root(Path(self.host_path).expanduser())

    def vfs_path(self, relative: str) -> str:
        """Where the host file `relative` (to the mount's root) appears in the VFS."""
        return normalize_vfs_path(relative, base=self.mount_path)


@dataclass(frozen=True)
class VfsFile:
    """A file the model wrote (`vfs_write_file`); it shadows any host file at `path`."""

    path: str
    content: str

    @property
    def size(self) -> int:
        """Size in bytes of the content encoded as UTF-8."""
        return len(self.content.encode("utf-8"))


@dataclass(frozen=True)
class VfsHostCopy:
    """A host file as it was first read in this session, kept so later reads agree."""

    path: str
    content: str
    size: int


@dataclass(frozen=True)
class VfsMount:
    """A mount's listing: its files (relative to `host_path`) and what was left out, by reason.

    The counts are known when the listing is recorded; the files themselves are loaded when
    they are first used (`load_files`), so a listing recorded from a helper's counts
    (`record_counted_listing`) costs nothing until a tool needs a path. Listings compare by
    their counts and paths on the host, not by their files.
    """

    mount_path: str
    host_path: str
    file_count: int
    total_bytes: int
    max_file_bytes: int
    skipped: tuple[tuple[str, int], ...] = ()
    load_files: Callable[[], tuple[WorkspaceFile, ...]] = field(
        default=tuple, repr=False, compare=False
    )

    @cached_property
    def files(self) -> tuple[WorkspaceFile, ...]:
        """The listed files, relative to `host_path` (loaded on first use)."""
        return self.load_files()

    @cached_property
    def by_vfs_path(self) -> dict[str, WorkspaceFile]:
        """The listed files by their VFS path (built on first use)."""
        prefix = "" if self.mount_path == "/" else self.mount_path
        return {f"{prefix}/{file.path}": file for file in self.files}


@dataclass(frozen=True)
class VfsMountListed:
    """Event: `mount` was listed (again); read copies under it are dropped, writes are kept."""

    mount: VfsMount


# Writes are the model's work and survive a restore; the listing and the read copies are
# rebuilt from the host, and persisting them would store whole trees per event.
register_slice_type("promptkit.vfs_file", VfsFile)
register_in_memory_slice_type(VfsHostCopy)
register_in_memory_slice_type(VfsMount)


def _record_listing(current: tuple[VfsMount, ...], event: VfsMountListed) -> tuple[VfsMount, ...]:
    kept = tuple(mount for mount in current if mount.mount_path != event.mount.mount_path)
    return (*kept, event.mount)


def _drop_copies(
    current: tuple[VfsHostCopy, ...], event: VfsMountListed
) -> tuple[VfsHostCopy, ...]:
    return tuple(copy for copy in current if not is_within(copy.path, event.mount.mount_path))


def _path_of(value: VfsFile | VfsHostCopy) -> str:
    return value.path


def register_vfs_reducers(session: Session) -> None:
    """Route the VFS events of `session` into its `VfsMount`, `VfsHostCopy` and `VfsFile`."""
    session.register_reducer(VfsMountListed, _record_listing, VfsMount)
    session.register_reducer(VfsMountListed, _drop_copies, VfsHostCopy)
    session.register_reducer(VfsFile, upsert_by(_path_of))
    session.register_reducer(VfsHostCopy, upsert_by(_path_of))


def list_mount(mount: HostMount) -> VfsMount:
    """The listing of `mount` (names and sizes only); WorkspaceError when it is not a directory."""
    selection = select_files(
        mount.root(),
        max_file_bytes=mount.max_file_bytes,
        include=mount.include_glob,
        exclude=mount.exclude_glob,
    )
    return _listing_of(mount, selection)


def record_listing(session: Session, mount: HostMount, selection: FileSelection) -> VfsMount:
    """Record in `session` the listing of `mount` taken from `selection`, a listing of the
    mount's directory without globs (the caller's, shared with other uses): what the first use
    of the mount would list, without listing the workspace again.

    ArgumentValueError when `selection` is not of the mount's directory and size cap.
    """
    _require_listing_of(mount, selection.root, selection.max_file_bytes)
    listing = _listing_of(mount, _narrowed_for(mount, selection))
    register_vfs_reducers(session)
    session.dispatch(VfsMountListed(listing))
    return listing


def record_counted_listing(
    session: Session,
    mount: HostMount,
    summary: ListingSummary,
    load_selection: Callable[[], FileSelection],
) -> VfsMount:
    """Record in `session` the listing of `mount` from a listing helper's `summary` (counted
    with the mount's globs, see `ListingProcess.narrow`) before its files are read:
    `load_selection` gives the selection without globs when a tool first needs the files.

    ArgumentValueError when `summary` is not of the mount's directory and size cap.
    """
    _require_listing_of(mount, summary.root, summary.max_file_bytes)

    def load_files() -> tuple[WorkspaceFile, ...]:
        return _narrowed_for(mount, load_selection()).files

    listing = VfsMount(
        mount_path=mount.mount_path,
        host_path=str(summary.root),
        file_count=summary.file_count,
        total_bytes=summary.total_bytes,
        max_file_bytes=mount.max_file_bytes,
        skipped=summary.skipped,
        load_files=load_files,
    )
    register_vfs_reducers(session)
    session.dispatch(VfsMountListed(listing))
    return listing


def _narrowed_for(mount: HostMount, selection: FileSelection) -> FileSelection:
    with collector_paused():
        return selection.narrowed(mount.include_glob, mount.exclude_glob)


def _listing_of(mount: HostMount, selection: FileSelection) -> VfsMount:
    files = selection.files
    return VfsMount(
        mount_path=mount.mount_path,
        host_path=str(selection.root),
        file_count=len(files),
        total_bytes=selection.total_bytes,
        max_file_bytes=mount.max_file_bytes,
        skipped=tuple(selection.skipped),
        load_files=lambda: files,
    )


def _require_listing_of(mount: HostMount, root: Path, max_file_bytes: int) -> None:
    if root != mount.root() or max_file_bytes != mount.max_file_bytes:
        raise ArgumentValueError(
            f"the selection of {root} (files up to {max_file_bytes} bytes)"
            f" is not a listing of the mount {mount.host_path} (files up to"
            f" {mount.max_file_bytes} bytes): select the mount's directory with its size cap"
        )


def relist_mounts(session: Session, mounts: Sequence[HostMount]) -> None:
    """List `mounts` again, so files created on the host since appear; writes are kept.

    Every mount is listed before anything is dispatched, so a failure changes nothing.
    """
    register_vfs_reducers(session)
    listings = [list_mount(mount) for mount in mounts]
    for listing in listings:
        session.dispatch(VfsMountListed(listing))


class BinaryFileError(WorkspaceError):
    """A listed file turned out binary when read (a NUL byte): searches skip it quietly."""


def forget_listings(session: Session) -> None:
    """Drop every listing and read copy of `session`, keeping the model's writes: the next use
    of a workspace section lists its mounts again and reads files afresh."""
    session.clear_slice(VfsMount)
    session.clear_slice(VfsHostCopy)


def read_host_text(
    reader: WorkspaceReader, root: Path, relative: str, *, max_file_bytes: int
) -> str:
    """The text of the host file `relative` in `root`: the one place the VFS reads the host.

    WorkspaceError (from the reader, or here) when the file is over `max_file_bytes` now or is
    binary (a NUL byte). Bytes that are not UTF-8 become U+FFFD, so the text stays readable.
    """
    data = reader.read(root, relative, limit=max_file_bytes + 1)
    if len(data) > max_file_bytes:
        raise WorkspaceError(
            f"{relative} has grown over the {max_file_bytes}-byte file limit since it was"
            " listed; it is not read"
        )
    if b"\0" in data:
        raise BinaryFileError(f"{relative} is a binary file (it holds NUL bytes); it is not read")
    return data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class HostText:
    """What a read returned: the text, and whether it was kept in the overlay."""

    content: str
    is_kept: bool = True


@dataclass(frozen=True)
class Overlay:
    """The session-held view of `mounts`: listings, read copies and writes, resolved by path."""

    session: Session
    mounts: tuple[HostMount, ...]
    reader: WorkspaceReader = HOST_READER

    @property
    def mount_paths(self) -> tuple[str, ...]:
        return tuple(mount.mount_path for mount in self.mounts)

    def listing(self, mount: HostMount) -> VfsMount:
        """The recorded listing of `mount`, recorded now when the session has none for it."""
        register_vfs_reducers(self.session)
        records = self.session.select_where(
            VfsMount, lambda record: record.mount_path == mount.mount_path
        )
        host_path = str(mount.root())
        if records and records[-1].host_path == host_path:
            return records[-1]
        listing = list_mount(mount)
        self.session.dispatch(VfsMountListed(listing))
        return listing

    def recorded_listing(self, mount: HostMount) -> VfsMount | None:
        """The listing recorded for `mount`, without listing it."""
        records = self.session.select_where(
            VfsMount, lambda record: record.mount_path == mount.mount_path
        )
        return records[-1] if records else None

    def mount_of(self, path: str) -> HostMount | None:
        return next((m for m in self.mounts if is_within(path, m.mount_path)), None)

    def written(self, path: str) -> VfsFile | None:
        found = self.session.select_where(VfsFile, lambda file: file.path == path)
        return found[-1] if found else None

    def listed(self, path: str) -> tuple[HostMount, WorkspaceFile] | None:
        mount = self.mount_of(path)
        if mount is None:
            return None
        file = self.listing(mount).by_vfs_path.get(path)
        return None if file is None else (mount, file)

    def is_file(self, path: str) -> bool:
        return self.written(path) is not None or self.listed(path) is not None

    def files(self) -> Iterator[tuple[str, int]]:
        """(VFS path, size) of every file: written files, then listed files not shadowed."""
        written = {file.path: file.size for file in self.session.select_all(VfsFile)}
        yield from written.items()
        for mount in self.mounts:
            for path, file in self.listing(mount).by_vfs_path.items():
                if path not in written:
                    yield path, file.size

    def is_directory(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        if any(mount == path or mount.startswith(prefix) for mount in self.mount_paths):
            return True
        return any(file.startswith(prefix) for file, _ in self.files())

    def read(self, path: str, *, keep: bool = True) -> HostText:
        """The text at VFS `path`: a write, else the kept copy, else the host file read now.

        WorkspaceError saying why when there is no such file or the host file cannot be read.
        With `keep`, a host read is kept while the mount's `max_bytes` allows.
        """
        written = self.written(path)
        if written is not None:
            return HostText(written.content)
        copies = self.session.select_where(VfsHostCopy, lambda copy: copy.path == path)
        if copies:
            return HostText(copies[-1].content)
        found = self.listed(path)
        if found is None:
            raise WorkspaceError(f"no file {path} in the workspace: find files with vfs_glob")
        mount, file = found
        content = read_host_text(
            self.reader,
            Path(self.listing(mount).host_path),
            file.path,
            max_file_bytes=mount.max_file_bytes,
        )
        if not keep:
            return HostText(content, is_kept=False)
        size = len(content.encode("utf-8"))
        kept = sum(
            copy.size
            for copy in self.session.select_all(VfsHostCopy)
            if is_within(copy.path, mount.mount_path)
        )
        if kept + size > mount.max_bytes:
            return HostText(content, is_kept=False)
        self.session.dispatch(VfsHostCopy(path=path, content=content, size=size))
        return HostText(content)
