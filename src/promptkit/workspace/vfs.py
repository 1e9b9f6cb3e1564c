"""An in-memory copy of host directories, held in a Session, and the `vfs_*` file tools over it.

`HostMount` names a host directory and where it appears in the virtual filesystem. Only files
`select_files` allows are copied (never credential files, binaries, files over the size cap or
symlinks out of the root), each read again through `read_workspace_bytes`, so nothing outside a
mount's root is ever read. The copy lives in session slices (`VfsFile`, `VfsMount`): it is
cloned with the session and never written back, so `vfs_write_file` cannot modify the host.
These slices are in-memory by intent (`register_in_memory_slice_type`), so a SessionStore
neither records nor warns about them; a restored session copies the mounts again.

Every path a tool receives is normalised first; `..` climbing above `/`, NUL bytes and paths
outside every mount are refused with a failed `ToolResult`, never an exception. `vfs_grep` runs
the model's regular expression in a child Python process with a time limit, because a pattern
such as `(a+)+$` can backtrack for hours and `re` cannot be interrupted in-process.

`WorkspaceSection` is the base of `VfsWorkspaceSection` and `PodmanWorkspaceSection`: both bind
to a session, copy their mounts into it and offer the same file tools.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from promptkit.errors import PromptValidationError, WorkspaceError
from promptkit.prompt import RenderContext, Section, Tool, ToolContext, ToolResult
from promptkit.session import Session, register_in_memory_slice_type, upsert_by
from promptkit.workspace.files import (
    DEFAULT_MAX_FILE_BYTES,
    read_workspace_bytes,
    select_files,
)

__all__ = [
    "DEFAULT_MOUNT_MAX_BYTES",
    "HostMount",
    "PathGlob",
    "VfsFile",
    "VfsFilesLoaded",
    "VfsMount",
    "VfsWorkspaceSection",
    "VirtualFilesystem",
    "WorkspaceSection",
    "load_mounts",
    "normalize_vfs_path",
]

DEFAULT_MOUNT_MAX_BYTES = 32 * 1024 * 1024
DEFAULT_GREP_TIMEOUT = 5.0
MAX_LISTED_ENTRIES = 500
MAX_READ_LINES = 2000
DEFAULT_READ_LINES = 400
MAX_LINE_CHARS = 2000
MAX_GLOB_RESULTS = 200
MAX_GREP_MATCHES = 200
MAX_PATTERN_CHARS = 1000
# Lines longer than this are searched in their first part only; minified files would
# otherwise make each match attempt arbitrarily expensive.
GREP_LINE_CHARS = 4000
GREP_SHOWN_CHARS = 300


@dataclass(frozen=True)
class HostMount:
    """A host directory copied into the virtual filesystem at `mount_path`.

    `include_glob` (when given) and `exclude_glob` filter files by their path relative to
    `host_path` (`*` stays within a directory, `**` spans directories). `max_bytes` caps the
    bytes copied from this mount in total, `max_file_bytes` each file (larger files are left
    out, like binaries and credential files).
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


@dataclass(frozen=True)
class VfsFile:
    """One file of the virtual filesystem; `written` is True once a tool wrote it."""

    path: str
    content: str
    written: bool = False

    @property
    def size(self) -> int:
        """Size in bytes of the content encoded as UTF-8."""
        return len(self.content.encode("utf-8"))


@dataclass(frozen=True)
class VfsMount:
    """A host directory copied into the session: what was copied and what was left out."""

    mount_path: str
    host_path: str
    file_count: int
    total_bytes: int
    max_file_bytes: int
    skipped: tuple[tuple[str, int], ...] = ()


# The copy is rebuilt from the host on restore; persisting it would store whole files per event.
register_in_memory_slice_type(VfsFile)
register_in_memory_slice_type(VfsMount)


@dataclass(frozen=True)
class VfsFilesLoaded:
    """Event: the files of `mount` were copied in (replacing files at the same paths)."""

    mount: VfsMount
    files: tuple[VfsFile, ...]


def _merge_loaded(current: tuple[VfsFile, ...], event: VfsFilesLoaded) -> tuple[VfsFile, ...]:
    # A (re)loaded mount replaces everything under its mount path, written files included.
    mount_path = event.mount.mount_path
    kept = tuple(file for file in current if not _is_within(file.path, mount_path))
    return (*kept, *event.files)


def _record_mount(current: tuple[VfsMount, ...], event: VfsFilesLoaded) -> tuple[VfsMount, ...]:
    kept = tuple(mount for mount in current if mount.mount_path != event.mount.mount_path)
    return (*kept, event.mount)


def _path_of(file: VfsFile) -> str:
    return file.path


_upsert_file = upsert_by(_path_of)


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


def _is_within(path: str, directory: str) -> bool:
    return directory == "/" or path == directory or path.startswith(directory + "/")


@dataclass(frozen=True)
class PathGlob:
    """A path glob: `*`, `?` and `[...]` match within one path segment, `**` any segments.

    Each segment is matched with `fnmatch`'s translation (which cannot backtrack
    catastrophically) and `**` by a walk over pattern positions, so matching costs at most
    segments x path depth, whatever the pattern.
    """

    pattern: str
    segments: tuple[re.Pattern[str] | None, ...]

    @classmethod
    def compile(cls, pattern: str) -> PathGlob:
        parts = [part for part in pattern.split("/") if part not in ("", ".")]
        segments: list[re.Pattern[str] | None] = []
        for part in parts:
            if part == "**":
                if not segments or segments[-1] is not None:
                    segments.append(None)
            else:
                segments.append(re.compile(fnmatch.translate(part)))
        return cls(pattern, tuple(segments))

    def matches(self, relative_path: str) -> bool:
        """Whether `relative_path` (segments joined by `/`) matches the whole glob."""
        segments = self.segments
        states = self._skip_globstars({0})
        for name in relative_path.split("/"):
            advanced: set[int] = set()
            for state in states:
                if state == len(segments):
                    continue
                segment = segments[state]
                if segment is None:
                    advanced.add(state)
                elif segment.match(name):
                    advanced.add(state + 1)
            states = self._skip_globstars(advanced)
            if not states:
                return False
        return len(segments) in states

    def _skip_globstars(self, states: set[int]) -> set[int]:
        # `**` also matches zero segments: a state before one may move past it for free.
        result = set(states)
        for state in sorted(states):
            while state < len(self.segments) and self.segments[state] is None:
                state += 1
                result.add(state)
        return result


def _matches_any(path: str, globs: Sequence[PathGlob]) -> bool:
    return any(glob.matches(path) for glob in globs)


def load_mounts(session: Session, mounts: Sequence[HostMount]) -> None:
    """Copy each mount's selected files into `session`, unless that mount is already there.

    A mount already present (same mount path and host directory, as in a cloned session) is
    kept as it is, with any files the model wrote. Every mount is read before anything is
    dispatched, so a failure leaves the session unchanged. Raises WorkspaceError when a host
    path is not a directory or its selected files exceed `max_bytes`.
    """
    _register_vfs_reducers(session)
    present = {record.mount_path: record.host_path for record in session.select_all(VfsMount)}
    loaded = [
        _read_mount(mount)
        for mount in mounts
        if present.get(mount.mount_path) != _resolved_host_path(mount)
    ]
    for event in loaded:
        session.dispatch(event)


def _read_mount(mount: HostMount) -> VfsFilesLoaded:
    """The selected files of `mount` as an event that copies them into a session."""
    selection = select_files(mount.host_path, max_file_bytes=mount.max_file_bytes)
    includes = [PathGlob.compile(glob) for glob in mount.include_glob]
    excludes = [PathGlob.compile(glob) for glob in mount.exclude_glob]
    root = selection.root
    files: list[VfsFile] = []
    skipped = dict(selection.skipped)
    total = 0
    for entry in selection.files:
        if includes and not _matches_any(entry.path, includes):
            continue
        if _matches_any(entry.path, excludes):
            continue
        try:
            data = read_workspace_bytes(root, entry.path, limit=mount.max_file_bytes + 1)
        except WorkspaceError:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
            continue
        if len(data) > mount.max_file_bytes:
            skipped["too_large"] = skipped.get("too_large", 0) + 1
            continue
        if b"\0" in data:
            skipped["binary"] = skipped.get("binary", 0) + 1
            continue
        total += len(data)
        if total > mount.max_bytes:
            raise WorkspaceError(
                f"mount {mount.host_path} -> {mount.mount_path}: the selected files exceed"
                f" max_bytes={mount.max_bytes}; narrow include_glob/exclude_glob or raise"
                " max_bytes"
            )
        # Text that is not valid UTF-8 is kept readable; U+FFFD marks the undecodable bytes.
        content = data.decode("utf-8", errors="replace")
        path = normalize_vfs_path(entry.path, base=mount.mount_path)
        files.append(VfsFile(path=path, content=content))
    record = VfsMount(
        mount_path=mount.mount_path,
        host_path=str(root),
        file_count=len(files),
        total_bytes=total,
        max_file_bytes=mount.max_file_bytes,
        skipped=tuple(sorted(skipped.items())),
    )
    return VfsFilesLoaded(mount=record, files=tuple(files))


def _resolved_host_path(mount: HostMount) -> str:
    try:
        return str(Path(mount.host_path).expanduser().resolve(strict=True))
    except OSError:
        return str(mount.host_path)


def _register_vfs_reducers(session: Session) -> None:
    """Route the VFS events of `session` into its `VfsFile` and `VfsMount` slices."""
    session.register_reducer(VfsFilesLoaded, _merge_loaded, VfsFile)
    session.register_reducer(VfsFilesLoaded, _record_mount, VfsMount)
    session.register_reducer(VfsFile, _upsert_file)


class _ListDirectoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default="/", description="Directory to list, e.g. `/` or `/src`.")


class _ReadFileParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to read, e.g. `/src/app.py`.")
    offset: int = Field(default=0, ge=0, description="Number of lines to skip from the start.")
    limit: int = Field(
        default=DEFAULT_READ_LINES,
        ge=1,
        le=MAX_READ_LINES,
        description=f"Most lines to return (at most {MAX_READ_LINES}).",
    )


class _GlobParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(
        min_length=1,
        description="Glob relative to `path`: `*` and `?` stay within a directory, `**` spans"
        " directories (e.g. `**/*.py`).",
    )
    path: str = Field(default="/", description="Directory the pattern is relative to.")


class _GrepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="Python regular expression searched line by line.",
    )
    path: str = Field(default="/", description="Directory (or file) to search under.")
    glob: str | None = Field(
        default=None, description="Only search files whose path relative to `path` matches."
    )
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    max_matches: int = Field(
        default=50, ge=1, le=MAX_GREP_MATCHES, description="Most matching lines to return."
    )


class _WriteFileParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to write, e.g. `/notes/plan.md`.")
    content: str = Field(description="The text to write.")
    mode: Literal["overwrite", "append", "create"] = Field(
        default="overwrite",
        description="`overwrite` replaces the file, `append` adds to it, `create` refuses an"
        " existing file.",
    )


@dataclass(frozen=True)
class VirtualFilesystem:
    """The session-held filesystem behind the `vfs_*` tools, confined to `mount_paths`."""

    session: Session
    mount_paths: tuple[str, ...]
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    grep_timeout: float = DEFAULT_GREP_TIMEOUT

    def files(self) -> tuple[VfsFile, ...]:
        """Every file, in the order they were first added."""
        return self.session.select_all(VfsFile)

    def tools(self) -> tuple[Tool[Any], ...]:
        """`vfs_list_directory`, `vfs_read_file`, `vfs_glob`, `vfs_grep` and `vfs_write_file`."""
        return (
            Tool(
                name="vfs_list_directory",
                description="List the files and directories directly inside a workspace directory.",
                params_type=_ListDirectoryParams,
                handler=_refusing_bad_paths(self.list_directory),
            ),
            Tool(
                name="vfs_read_file",
                description="Read a workspace file as numbered lines; use offset and limit to"
                " page through long files.",
                params_type=_ReadFileParams,
                handler=_refusing_bad_paths(self.read_file),
            ),
            Tool(
                name="vfs_glob",
                description="Find workspace files whose path matches a glob pattern.",
                params_type=_GlobParams,
                handler=_refusing_bad_paths(self.glob),
            ),
            Tool(
                name="vfs_grep",
                description="Search workspace files for lines matching a regular expression.",
                params_type=_GrepParams,
                handler=_refusing_bad_paths(self.grep),
            ),
            Tool(
                name="vfs_write_file",
                description="Write a file in the in-memory workspace copy (the host files are"
                " never changed).",
                params_type=_WriteFileParams,
                handler=_refusing_bad_paths(self.write_file),
            ),
        )

    # -- paths --------------------------------------------------------------------------------

    def _inside_mounts(self, raw: str) -> str:
        path = normalize_vfs_path(raw)
        if not any(_is_within(path, mount) for mount in self.mount_paths):
            raise WorkspaceError(
                f"{raw!r} is outside the mounted workspace ({', '.join(self.mount_paths)}):"
                " use a path under one of these"
            )
        return path

    def _file_at(self, path: str) -> VfsFile | None:
        found = self.session.select_where(VfsFile, lambda file: file.path == path)
        return found[-1] if found else None

    def _is_directory(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return any(mount == path or mount.startswith(prefix) for mount in self.mount_paths) or any(
            file.path.startswith(prefix) for file in self.files()
        )

    # -- tools --------------------------------------------------------------------------------

    def list_directory(self, params: _ListDirectoryParams, context: ToolContext) -> ToolResult:
        path = normalize_vfs_path(params.path)
        if self._file_at(path) is not None:
            return _failure(f"{path} is a file: read it with vfs_read_file")
        prefix = path.rstrip("/") + "/"
        directories: set[str] = set()
        sizes: dict[str, int] = {}
        for mount in self.mount_paths:
            if mount != path and mount.startswith(prefix):
                directories.add(mount[len(prefix) :].split("/", 1)[0])
        for file in self.files():
            if not file.path.startswith(prefix):
                continue
            name, _, rest = file.path[len(prefix) :].partition("/")
            if rest:
                directories.add(name)
            else:
                sizes[name] = file.size
        if not directories and not sizes and not self._is_directory(path):
            return _failure(f"no directory {path} in the workspace: list `/` to see what exists")
        entries = sorted([f"{name}/" for name in directories] + list(sizes))
        lines = [
            entry if entry.endswith("/") else f"{entry} ({sizes[entry]} bytes)"
            for entry in entries[:MAX_LISTED_ENTRIES]
        ]
        if len(entries) > MAX_LISTED_ENTRIES:
            lines.append(f"... {len(entries) - MAX_LISTED_ENTRIES} more entries not shown")
        header = f"{path}: {_count(len(directories), 'directory')}, {_count(len(sizes), 'file')}"
        return ToolResult(
            message="\n".join([header, *lines]) if lines else f"{path} is empty",
            value={"path": path, "entries": entries[:MAX_LISTED_ENTRIES]},
        )

    def read_file(self, params: _ReadFileParams, context: ToolContext) -> ToolResult:
        path = self._inside_mounts(params.path)
        file = self._file_at(path)
        if file is None:
            if self._is_directory(path):
                return _failure(f"{path} is a directory: list it with vfs_list_directory")
            return _failure(f"no file {path} in the workspace: find files with vfs_glob")
        if params.offset < 0 or not 1 <= params.limit <= MAX_READ_LINES:
            return _failure(f"offset must be >= 0 and limit between 1 and {MAX_READ_LINES}")
        lines = file.content.splitlines()
        total = len(lines)
        if total == 0:
            return ToolResult(message=f"{path} is empty", value={"path": path, "total_lines": 0})
        if params.offset >= total:
            return _failure(f"offset {params.offset} is past the end of {path} ({total} lines)")
        chosen = lines[params.offset : params.offset + params.limit]
        first = params.offset + 1
        last = params.offset + len(chosen)
        numbered = [
            f"{number:>6}  {_clip(line, MAX_LINE_CHARS)}"
            for number, line in enumerate(chosen, start=first)
        ]
        header = f"{path} lines {first}-{last} of {total}"
        if last < total:
            header += f" (continue with offset={last})"
        return ToolResult(
            message="\n".join([header, *numbered]),
            value={"path": path, "first_line": first, "last_line": last, "total_lines": total},
        )

    def glob(self, params: _GlobParams, context: ToolContext) -> ToolResult:
        base = normalize_vfs_path(params.path)
        pattern = params.pattern.strip()
        if len(pattern) > MAX_PATTERN_CHARS:
            return _failure(f"glob pattern is longer than {MAX_PATTERN_CHARS} characters")
        if pattern.startswith("/"):
            base, pattern = "/", pattern.lstrip("/")
        glob = PathGlob.compile(pattern)
        prefix = base.rstrip("/") + "/"
        matches = sorted(
            file.path
            for file in self.files()
            if file.path.startswith(prefix) and glob.matches(file.path[len(prefix) :])
        )
        shown = matches[:MAX_GLOB_RESULTS]
        lines = list(shown)
        if len(matches) > MAX_GLOB_RESULTS:
            lines.append(
                f"... {len(matches) - MAX_GLOB_RESULTS} more matches not shown: narrow the pattern"
            )
        message = "\n".join(lines) if lines else f"no file under {base} matches {pattern!r}"
        return ToolResult(message=message, value={"matches": shown, "total": len(matches)})

    def grep(self, params: _GrepParams, context: ToolContext) -> ToolResult:
        if len(params.pattern) > MAX_PATTERN_CHARS:
            return _failure(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
        flags = re.IGNORECASE if params.ignore_case else 0
        try:
            re.compile(params.pattern, flags)
        except re.error as error:
            return _failure(f"invalid regular expression {params.pattern!r}: {error}")
        base = normalize_vfs_path(params.path)
        single = self._file_at(base)
        if single is not None:
            candidates = [single]
        else:
            prefix = base.rstrip("/") + "/"
            path_filter = PathGlob.compile(params.glob) if params.glob else None
            candidates = [
                file
                for file in self.files()
                if file.path.startswith(prefix)
                and (path_filter is None or path_filter.matches(file.path[len(prefix) :]))
            ]
        if not candidates:
            return _failure(f"no file under {base} to search: check path and glob")
        limit = min(params.max_matches, MAX_GREP_MATCHES)
        timeout = self.grep_timeout
        if context.deadline is not None:
            timeout = min(timeout, max(0.0, context.deadline - time.monotonic()))
        outcome = _run_grep(params.pattern, flags, candidates, limit, timeout)
        if isinstance(outcome, str):
            return _failure(outcome)
        matches, truncated = outcome
        lines = [f"{path}:{number}: {text}" for path, number, text in matches]
        if truncated:
            lines.append(f"... more matches not shown (limit {limit}): narrow the search")
        message = "\n".join(lines) if lines else f"no line matches {params.pattern!r}"
        return ToolResult(
            message=message,
            value={
                "matches": [{"path": p, "line": n} for p, n, _ in matches],
                "truncated": truncated,
            },
        )

    def write_file(self, params: _WriteFileParams, context: ToolContext) -> ToolResult:
        path = self._inside_mounts(params.path)
        if path in self.mount_paths or self._is_directory(path):
            return _failure(f"{path} is a directory: write to a file path inside it")
        parent = path.rsplit("/", 1)[0] or "/"
        while parent != "/":
            if self._file_at(parent) is not None:
                return _failure(f"{parent} is a file, so {path} cannot be created under it")
            parent = parent.rsplit("/", 1)[0] or "/"
        existing = self._file_at(path)
        if params.mode == "create" and existing is not None:
            return _failure(f"{path} already exists: use mode='overwrite' or 'append'")
        content = params.content
        if params.mode == "append" and existing is not None:
            content = existing.content + content
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            return _failure(
                f"{path} would hold {size} bytes, over the {self.max_file_bytes}-byte limit"
            )
        self.session.dispatch(VfsFile(path=path, content=content, written=True))
        verb = "created" if existing is None else "updated"
        return ToolResult(
            message=f"{verb} {path} ({size} bytes) in the workspace copy; host files are unchanged",
            value={"path": path, "bytes": size},
        )


def _failure(message: str) -> ToolResult:
    return ToolResult(message=message, success=False)


def _count(number: int, noun: str) -> str:
    if number == 1:
        return f"1 {noun}"
    plural = f"{noun[:-1]}ies" if noun.endswith("y") else f"{noun}s"
    return f"{number} {plural}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more chars]"


def _refusing_bad_paths(handler: Any) -> Any:
    """Wrap a tool handler so a refused path becomes a failed ToolResult, not an exception."""

    def run(params: Any, context: ToolContext) -> ToolResult:
        try:
            result: ToolResult = handler(params, context)
        except WorkspaceError as error:
            return _failure(str(error))
        return result

    run.__qualname__ = getattr(handler, "__qualname__", "vfs_tool")
    return run


# Runs in a child interpreter started with -I -S: stdlib only, no promptkit import.
_GREP_WORKER = r"""
import json, re, sys
job = json.load(sys.stdin)
regex = re.compile(job["pattern"], job["flags"])
limit, line_chars, shown = job["limit"], job["line_chars"], job["shown"]
matches, truncated = [], False
for path, content in job["files"]:
    for number, line in enumerate(content.splitlines(), start=1):
        if regex.search(line[:line_chars]):
            if len(matches) == limit:
                truncated = True
                break
            matches.append([path, number, line[:shown]])
    if truncated:
        break
json.dump({"matches": matches, "truncated": truncated}, sys.stdout)
"""


def _run_grep(
    pattern: str, flags: int, files: Sequence[VfsFile], limit: int, timeout: float
) -> tuple[list[tuple[str, int, str]], bool] | str:
    """(matches, truncated), or a message saying why the search was stopped."""
    job = {
        "pattern": pattern,
        "flags": flags,
        "limit": limit,
        "line_chars": GREP_LINE_CHARS,
        "shown": GREP_SHOWN_CHARS,
        "files": [[file.path, file.content] for file in files],
    }
    try:
        completed = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _GREP_WORKER],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=max(timeout, 0.01),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return (
            f"vfs_grep stopped after {timeout:g}s: the pattern is too slow on these files"
            " (nested quantifiers such as (a+)+ backtrack exponentially); simplify it or"
            " narrow path and glob"
        )
    except OSError as error:
        return f"vfs_grep could not start its search process: {error.strerror or error}"
    if completed.returncode != 0:
        last_line = (completed.stderr.strip().splitlines() or ["no error output"])[-1]
        return f"vfs_grep failed: {last_line}"
    result = json.loads(completed.stdout)
    matches = [(str(path), int(number), str(text)) for path, number, text in result["matches"]]
    return matches, bool(result["truncated"])


_MOUNTS_HEADER = "Mounted directories:"


@dataclass(frozen=True, kw_only=True, eq=False)
class WorkspaceSection(Section):
    """Base of the workspace sections: mounts copied into `session` and the `vfs_*` tools.

    The body is the section's guidance (or its override, exactly as stored) followed by the
    list of mounts with how many files each holds. `clone(session=...)` requires a Session;
    the clone copies the mounts into that session unless it already holds them.
    `mask_credentials=False` lets this section's tool results reach the model with credentials
    in them (they are masked by default; see `promptkit.prompt.mask_tool_result`).
    """

    session: Session
    mounts: Sequence[HostMount]
    title: str = "Workspace"
    key: str = "workspace"
    grep_timeout: float = DEFAULT_GREP_TIMEOUT
    mask_credentials: bool = True
    tools: tuple[Tool[Any], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.session, Session):
            raise TypeError(
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
        load_mounts(self.session, mounts)
        tools = self.filesystem.tools() + self._backend_tools()
        if not self.mask_credentials:
            tools = tuple(dataclasses.replace(tool, masks_credentials=False) for tool in tools)
        object.__setattr__(self, "tools", tools)

    @property
    def filesystem(self) -> VirtualFilesystem:
        """The virtual filesystem the tools work on."""
        return VirtualFilesystem(
            session=self.session,
            mount_paths=tuple(mount.mount_path for mount in self.mounts),
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
        """One line per mount: where it is and how many files and bytes it holds."""
        records = {record.mount_path: record for record in self.session.select_all(VfsMount)}
        lines = [_MOUNTS_HEADER, ""]
        for mount in self.mounts:
            record = records.get(mount.mount_path)
            if record is None:
                lines.append(f"- `{mount.mount_path}`: not loaded")
                continue
            line = (
                f"- `{mount.mount_path}`: {_count(record.file_count, 'file')},"
                f" {_count(record.total_bytes, 'byte')}"
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
            raise TypeError(
                f"{type(self).__name__}.clone requires session=<a promptkit Session>: the"
                " workspace copy lives in one concrete session"
            )
        return super().clone(**changes)


def _require_disjoint(mounts: Sequence[HostMount], *, key: str) -> None:
    paths = [mount.mount_path for mount in mounts]
    for index, first in enumerate(paths):
        for second in paths[index + 1 :]:
            if _is_within(first, second) or _is_within(second, first):
                raise PromptValidationError(
                    f"section {key!r}: mounts at {first} and {second} overlap; mount each"
                    " directory at its own path (for example /repo and /docs)"
                )


_VFS_GUIDANCE = """\
The workspace is an in-memory copy of the mounted directories below. Explore it with the
`vfs_*` tools instead of guessing: `vfs_list_directory` to see a directory, `vfs_glob` to find
files by name (`**/*.py`), `vfs_grep` to search their lines with a regular expression, and
`vfs_read_file` to read a file in pages of numbered lines (`offset`, `limit`).
`vfs_write_file` changes the copy only: the host files are never modified. Paths are absolute
(`/src/app.py`) or relative to `/`; paths outside the mounts are refused. Credential files,
binary files and very large files were not copied."""


@dataclass(frozen=True, kw_only=True, eq=False)
class VfsWorkspaceSection(WorkspaceSection):
    """The mounted directories as an in-memory filesystem in `session`, with the `vfs_*` tools."""

    def original_body_template(self) -> str:
        return _VFS_GUIDANCE
