"""The `vfs_*` file tools over an `Overlay`: list, read, glob, grep and write.

Every path a tool receives is normalised first; `..` climbing above `/`, NUL bytes and paths
outside every mount are refused with a failed `ToolResult`, never an exception, and so is any
file that cannot be read now (deleted, replaced by a directory or a FIFO, unreadable, binary,
a symlink swapped to point out of the root): the result says which file and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from promptkit.errors import WorkspaceError
from promptkit.prompt import Tool, ToolContext, ToolResult, param_field
from promptkit.workspace._overlay import BinaryFileError, Overlay, VfsFile, normalize_vfs_path

# The glob syntax and the grep worker are imported by the tools that run them: a prompt is
# built (and hashed) from the tools' params and descriptions alone.

__all__ = ["DEFAULT_GREP_TIMEOUT", "VirtualFilesystem", "count_noun"]

DEFAULT_GREP_TIMEOUT = 5.0
MAX_LISTED_ENTRIES = 500
MAX_READ_LINES = 2000
DEFAULT_READ_LINES = 400
MAX_LINE_CHARS = 2000
MAX_GLOB_RESULTS = 200
MAX_GREP_MATCHES = 200
MAX_PATTERN_CHARS = 1000


@dataclass(frozen=True)
class _ListDirectoryParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    path: str = param_field("Directory to list, e.g. `/` or `/src`.", default="/")


@dataclass(frozen=True)
class _ReadFileParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    path: str = param_field("File to read, e.g. `/src/app.py`.")
    offset: int = param_field("Number of lines to skip from the start.", default=0, ge=0)
    limit: int = param_field(
        f"Most lines to return (at most {MAX_READ_LINES}).",
        default=DEFAULT_READ_LINES,
        ge=1,
        le=MAX_READ_LINES,
    )


@dataclass(frozen=True)
class _GlobParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    pattern: str = param_field(
        "Glob relative to `path`: `*` and `?` stay within a directory, `**` spans"
        " directories (e.g. `**/*.py`).",
        min_length=1,
    )
    path: str = param_field("Directory the pattern is relative to.", default="/")


@dataclass(frozen=True)
class _GrepParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    pattern: str = param_field(
        "Python regular expression searched line by line.",
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
    )
    path: str = param_field("Directory (or file) to search under.", default="/")
    glob: str | None = param_field(
        "Only search files whose path relative to `path` matches.", default=None
    )
    ignore_case: bool = param_field("Match case-insensitively.", default=False)
    max_matches: int = param_field(
        "Most matching lines to return.", default=50, ge=1, le=MAX_GREP_MATCHES
    )


@dataclass(frozen=True)
class _WriteFileParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    path: str = param_field("File to write, e.g. `/notes/plan.md`.")
    content: str = param_field("The text to write.")
    mode: Literal["overwrite", "append", "create"] = param_field(
        "`overwrite` replaces the file, `append` adds to it, `create` refuses an existing file.",
        default="overwrite",
    )


@dataclass(frozen=True)
class VirtualFilesystem:
    """The `vfs_*` tools over `overlay`, confined to its mounts."""

    overlay: Overlay
    max_file_bytes: int
    grep_timeout: float = DEFAULT_GREP_TIMEOUT

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
                description="Write a file in the workspace overlay (the host files are never"
                " changed).",
                params_type=_WriteFileParams,
                handler=_refusing_bad_paths(self.write_file),
            ),
        )

    def _inside_mounts(self, raw: str) -> str:
        path = normalize_vfs_path(raw)
        if self.overlay.mount_of(path) is None:
            mounts = ", ".join(self.overlay.mount_paths)
            raise WorkspaceError(
                f"{raw!r} is outside the mounted workspace ({mounts}): use a path under one of"
                " these"
            )
        return path

    def list_directory(self, params: _ListDirectoryParams, context: ToolContext) -> ToolResult:
        path = normalize_vfs_path(params.path)
        if self.overlay.mount_of(path) is not None and self.overlay.is_file(path):
            return _failure(f"{path} is a file: read it with vfs_read_file")
        prefix = path.rstrip("/") + "/"
        directories: set[str] = set()
        sizes: dict[str, int] = {}
        for mount in self.overlay.mount_paths:
            if mount != path and mount.startswith(prefix):
                directories.add(mount[len(prefix) :].split("/", 1)[0])
        if self.overlay.mount_of(path) is not None:
            for file, size in self.overlay.files():
                if not file.startswith(prefix):
                    continue
                name, _, rest = file[len(prefix) :].partition("/")
                if rest:
                    directories.add(name)
                else:
                    sizes[name] = size
        if not directories and not sizes and not self.overlay.is_directory(path):
            return _failure(f"no directory {path} in the workspace: list `/` to see what exists")
        entries = sorted([f"{name}/" for name in directories] + list(sizes))
        lines = [
            entry if entry.endswith("/") else f"{entry} ({sizes[entry]} bytes)"
            for entry in entries[:MAX_LISTED_ENTRIES]
        ]
        if len(entries) > MAX_LISTED_ENTRIES:
            lines.append(f"... {len(entries) - MAX_LISTED_ENTRIES} more entries not shown")
        header = (
            f"{path}: {count_noun(len(directories), 'directory')}, {count_noun(len(sizes), 'file')}"
        )
        return ToolResult(
            message="\n".join([header, *lines]) if lines else f"{path} is empty",
            value={"path": path, "entries": entries[:MAX_LISTED_ENTRIES]},
        )

    def read_file(self, params: _ReadFileParams, context: ToolContext) -> ToolResult:
        path = self._inside_mounts(params.path)
        if not self.overlay.is_file(path):
            if self.overlay.is_directory(path):
                return _failure(f"{path} is a directory: list it with vfs_list_directory")
            return _failure(f"no file {path} in the workspace: find files with vfs_glob")
        if params.offset < 0 or not 1 <= params.limit <= MAX_READ_LINES:
            return _failure(f"offset must be >= 0 and limit between 1 and {MAX_READ_LINES}")
        text = self.overlay.read(path)
        lines = text.content.splitlines()
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
        if not text.is_kept:
            header += (
                " [not kept: this mount's read budget is spent, so a later read shows the host"
                " file as it is then]"
            )
        return ToolResult(
            message="\n".join([header, *numbered]),
            value={"path": path, "first_line": first, "last_line": last, "total_lines": total},
        )

    def glob(self, params: _GlobParams, context: ToolContext) -> ToolResult:
        from promptkit.hostfiles import PathGlob

        base = normalize_vfs_path(params.path)
        pattern = params.pattern.strip()
        if len(pattern) > MAX_PATTERN_CHARS:
            return _failure(f"glob pattern is longer than {MAX_PATTERN_CHARS} characters")
        if pattern.startswith("/"):
            base, pattern = "/", pattern.lstrip("/")
        glob = PathGlob.compile(pattern)
        prefix = base.rstrip("/") + "/"
        matches = sorted(
            path
            for path, _ in self.overlay.files()
            if path.startswith(prefix) and glob.matches(path[len(prefix) :])
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
        from promptkit.workspace._grep import search_lines

        if len(params.pattern) > MAX_PATTERN_CHARS:
            return _failure(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
        flags = re.IGNORECASE if params.ignore_case else 0
        try:
            re.compile(params.pattern, flags)
        except re.error as error:
            return _failure(f"invalid regular expression {params.pattern!r}: {error}")
        base = normalize_vfs_path(params.path)
        candidates = self._grep_candidates(base, params.glob)
        if not candidates:
            return _failure(f"no file under {base} to search: check path and glob")
        limit = min(params.max_matches, MAX_GREP_MATCHES)
        timeout = self.grep_timeout
        remaining = context.remaining_s()
        if remaining is not None:
            if remaining <= 0.0:
                return _failure(
                    "vfs_grep stopped after 0s, before it started: the call's deadline has passed"
                )
            timeout = min(timeout, remaining)
        left_out: list[str] = []
        outcome = search_lines(
            params.pattern,
            flags,
            self._texts(candidates, left_out),
            limit=limit,
            timeout=timeout,
        )
        if isinstance(outcome, str):
            return _failure(outcome)
        lines = [f"{match.path}:{match.line}: {match.text}" for match in outcome.matches]
        if outcome.is_truncated:
            lines.append(f"... more matches not shown (limit {limit}): narrow the search")
        elif outcome.is_stopped:
            lines.append(
                f"... stopped after {timeout:g}s, {outcome.files_searched:,} of"
                f" {len(candidates):,} files searched: narrow path or glob to search the rest"
            )
        if left_out:
            lines.append(
                f"({count_noun(len(left_out), 'file')} not searched: deleted, replaced or"
                f" unreadable since listing, e.g. {left_out[0]})"
            )
        message = "\n".join(lines) if lines else f"no line matches {params.pattern!r}"
        return ToolResult(
            message=message,
            value={
                "matches": [{"path": m.path, "line": m.line} for m in outcome.matches],
                "truncated": outcome.is_truncated or outcome.is_stopped,
            },
        )

    def _grep_candidates(self, base: str, glob: str | None) -> list[str]:
        """The files a search of `base` (a file, or a folder filtered by `glob`) reads."""
        from promptkit.hostfiles import PathGlob

        if self.overlay.mount_of(base) is not None and self.overlay.is_file(base):
            return [base]
        prefix = base.rstrip("/") + "/"
        path_filter = PathGlob.compile(glob) if glob else None
        return sorted(
            path
            for path, _ in self.overlay.files()
            if path.startswith(prefix)
            and (path_filter is None or path_filter.matches(path[len(prefix) :]))
        )

    def _texts(self, paths: list[str], left_out: list[str]) -> Iterator[tuple[str, str]]:
        # Host files are read as the search reaches them and not kept: a search over a whole
        # tree would otherwise pull the tree into the session. Binaries are skipped quietly,
        # as any grep does; files that cannot be read now are counted in the result.
        for path in paths:
            try:
                yield path, self.overlay.read(path, keep=False).content
            except BinaryFileError:
                continue
            except WorkspaceError:
                left_out.append(path)

    def write_file(self, params: _WriteFileParams, context: ToolContext) -> ToolResult:
        path = self._inside_mounts(params.path)
        if path in self.overlay.mount_paths or self.overlay.is_directory(path):
            return _failure(f"{path} is a directory: write to a file path inside it")
        parent = path.rsplit("/", 1)[0] or "/"
        while parent != "/":
            if self.overlay.mount_of(parent) is not None and self.overlay.is_file(parent):
                return _failure(f"{parent} is a file, so {path} cannot be created under it")
            parent = parent.rsplit("/", 1)[0] or "/"
        exists = self.overlay.is_file(path)
        if params.mode == "create" and exists:
            return _failure(f"{path} already exists: use mode='overwrite' or 'append'")
        content = params.content
        if params.mode == "append" and exists:
            content = self.overlay.read(path).content + content
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            return _failure(
                f"{path} would hold {size} bytes, over the {self.max_file_bytes}-byte limit"
            )
        mount = self.overlay.mount_of(path)
        if mount is not None:
            # A mount's max_bytes bounds the session's writes under it, as it bounds the host
            # bytes the session keeps: a model writing in a loop cannot grow the session forever.
            others = sum(
                written.size
                for written in self.overlay.session.select_all(VfsFile)
                if written.path != path and self.overlay.mount_of(written.path) == mount
            )
            if others + size > mount.max_bytes:
                return _failure(
                    f"{path}: the writes under {mount.mount_path} would hold {others + size}"
                    f" bytes, over the mount's max_bytes of {mount.max_bytes}; write less, or"
                    " overwrite a file already written"
                )
        self.overlay.session.dispatch(VfsFile(path=path, content=content))
        verb = "updated" if exists else "created"
        return ToolResult(
            message=f"{verb} {path} ({size} bytes) in the workspace overlay; host files are"
            " unchanged",
            value={"path": path, "bytes": size},
        )


def _failure(message: str) -> ToolResult:
    return ToolResult(message=message, success=False)


def count_noun(number: int, noun: str) -> str:
    """`1 file`, `2 files`, `3 directories`."""
    if number == 1:
        return f"1 {noun}"
    plural = f"{noun[:-1]}ies" if noun.endswith("y") else f"{noun}s"
    return f"{number} {plural}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more chars]"


def _refusing_bad_paths(handler: Any) -> Any:
    """Wrap a tool handler so a refused path or an unreadable file becomes a failed
    ToolResult, not an exception."""

    def run(params: Any, context: ToolContext) -> ToolResult:
        try:
            result: ToolResult = handler(params, context)
        except WorkspaceError as error:
            return _failure(str(error))
        return result

    run.__qualname__ = getattr(handler, "__qualname__", "vfs_tool")
    return run
