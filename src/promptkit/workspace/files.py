"""Which files of a workspace promptkit may read, and reading them without leaving the root.

`select_files` lists the workspace the way its owner sees it: in a git work tree, what
`git ls-files --cached --others --exclude-standard` lists (tracked plus untracked, not ignored);
elsewhere, a directory walk that honours every `.gitignore` (gitwildmatch semantics, via
pathspec) and prunes VCS metadata and well-known cache/dependency directories.

Whatever the source, a file is always left out when it is:

- under `.git/`, or not valid UTF-8 in its name (no consumer could show it faithfully);
- a credential file by name (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `.npmrc`, ...);
- a symlink that resolves outside the root, a symlinked directory (never followed), or a file
  under one; a FIFO, socket or device (never opened, since opening a FIFO blocks);
- larger than the size cap, binary (a known binary extension, or a NUL in its first 8 KiB),
  deleted since git listed it, or unreadable.

Skipped files are counted by reason, so a digest can say what it left out.

The NUL sniff is the costly part of a selection (one open and read per file), and freshness
checks select the same workspace on every render. So the sniff's verdict on a tracked file git
reports unmodified is remembered per workspace, next to the file's blob id and stat (inode,
size, mtime, ctime); the next selection reuses it only while all of those are unchanged, so an
edit, a checkout or a chmod is sniffed again.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from promptkit.errors import ArgumentValueError, WorkspaceError
from promptkit.logging import get_logger
from promptkit.workspace._git import run_git, run_git_together

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "FileSelection",
    "SkipReason",
    "WorkspaceFile",
    "is_credential_file_name",
    "read_workspace_bytes",
    "resolve_workspace_root",
    "select_files",
]

_log = get_logger("promptkit.workspace")

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
_SNIFF_BYTES = 8192
_SNIFF_MEMORY_ROOTS = 16

SkipReason = Literal[
    "binary",
    "credential",
    "missing",
    "non_utf8_name",
    "not_regular_file",
    "symlink_outside_root",
    "symlinked_directory",
    "too_large",
    "unreadable",
]


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """One selected file: its POSIX path relative to the root, size in bytes, and version.

    `blob_id` is git's object id when the file is tracked and unmodified; otherwise it is None
    and `mtime_ns` stands for the version (it is always recorded).
    """

    path: str
    size: int
    mtime_ns: int
    blob_id: str | None = None


@dataclass(frozen=True, slots=True)
class FileSelection:
    """The files of a workspace promptkit may read, and how many were left out, by reason."""

    root: Path
    files: tuple[WorkspaceFile, ...]
    skipped: tuple[tuple[SkipReason, int], ...]
    from_git: bool

    def skipped_count(self, reason: SkipReason) -> int:
        """How many files were left out for `reason`."""
        return dict(self.skipped).get(reason, 0)


# Matched against the lower-cased file name. `.env.example` is excluded too: templates are
# where real keys get pasted by mistake, and the digest loses little without them.
_CREDENTIAL_NAME_GLOBS = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p8",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    "*.tfstate",
    "*.tfstate.*",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".dockercfg",
    "credentials",
    "credentials.json",
    "client_secret*.json",
    "secrets.json",
    "secrets.toml",
    "secrets.yaml",
    "secrets.yml",
)
_CREDENTIAL_NAME = re.compile("|".join(fnmatch.translate(glob) for glob in _CREDENTIAL_NAME_GLOBS))

# Known binary formats are left out without being opened.
# fmt: off
_BINARY_SUFFIXES = frozenset({
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "dll", "dmg", "dylib", "eot", "exe",
    "flac", "gif", "gz", "h5", "ico", "icns", "iso", "jar", "jpeg", "jpg", "lib", "lz4", "mo",
    "mov", "mp3", "mp4", "npy", "npz", "o", "obj", "ogg", "onnx", "otf", "parquet", "pdf",
    "pickle", "pkl", "png", "psd", "pt", "pyc", "pyd", "pyo", "rar", "safetensors", "so",
    "sqlite", "sqlite3", "tar", "tgz", "tif", "tiff", "ttf", "war", "wav", "webm", "webp",
    "whl", "woff", "woff2", "xz", "zip", "zst",
})
# fmt: on

# Pruned in a walk (git work trees rely on their own ignore rules instead).
_WALK_PRUNED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        "node_modules",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


# (blob id, inode, size, mtime_ns, ctime_ns) of a tracked, unmodified file when it was sniffed.
_SniffKey = tuple[str, int, int, int, int]
# Relative path -> (the key it was sniffed under, whether a NUL was found).
_Sniffs = dict[str, tuple[_SniffKey, bool]]


class _SniffMemory:
    """The last selection's sniff verdicts for up to `roots` workspaces, oldest dropped first."""

    def __init__(self, roots: int) -> None:
        self._roots = roots
        self._by_root: OrderedDict[str, _Sniffs] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, root: str) -> Mapping[str, tuple[_SniffKey, bool]]:
        with self._lock:
            return self._by_root.get(root, {})

    def remember(self, root: str, sniffs: _Sniffs) -> None:
        with self._lock:
            self._by_root[root] = sniffs
            self._by_root.move_to_end(root)
            while len(self._by_root) > self._roots:
                self._by_root.popitem(last=False)


_sniff_memory = _SniffMemory(_SNIFF_MEMORY_ROOTS)


def is_credential_file_name(name: str) -> bool:
    """Whether a file called `name` (no directory) holds credentials by convention."""
    return _CREDENTIAL_NAME.match(name.lower()) is not None


def resolve_workspace_root(root: str | os.PathLike[str]) -> Path:
    """`root` as an absolute, symlink-free path; WorkspaceError when it is not a directory."""
    path = Path(root)
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise WorkspaceError(
            f"workspace {path} cannot be opened ({type(error).__name__}): "
            "pass the path of an existing directory"
        ) from None
    if not resolved.is_dir():
        raise WorkspaceError(f"workspace {path} is not a directory: pass the repository's root")
    return resolved


def select_files(
    root: str | os.PathLike[str], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> FileSelection:
    """The readable text files of the workspace at `root`, sorted by path (see module doc)."""
    if max_file_bytes < 0:
        raise ArgumentValueError(f"max_file_bytes must be zero or more, got {max_file_bytes}")
    resolved = resolve_workspace_root(root)
    listing = _git_listing(resolved)
    checker = _Checker(resolved, max_file_bytes, _sniff_memory.recall(str(resolved)))
    if listing is not None:
        for raw_path, blob_id in listing:
            checker.consider_listed(raw_path, blob_id)
        _sniff_memory.remember(str(resolved), checker.sniffs)
    else:
        for relative in _walk_directory(resolved, "", [], checker):
            checker.consider_walked(relative)
    selection = FileSelection(
        root=resolved,
        files=tuple(sorted(checker.files, key=lambda file: file.path)),
        skipped=tuple(sorted(checker.skipped.items())),
        from_git=listing is not None,
    )
    _log.debug(
        "workspace_files_selected",
        root=str(resolved),
        files=len(selection.files),
        skipped=dict(selection.skipped),
        from_git=selection.from_git,
    )
    return selection


def read_workspace_bytes(root: Path, relative: str, *, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file `relative` inside `root`.

    The path is resolved again at read time, so a file swapped for a symlink to somewhere
    outside the root after selection is refused rather than read. Raises WorkspaceError.
    """
    if relative.startswith("/") or ".." in relative.split("/"):
        raise WorkspaceError(f"{relative!r} escapes the workspace {root}: use a relative path")
    target = root / relative
    real = os.path.realpath(target)
    if not _is_inside(real, str(root)):
        raise WorkspaceError(f"{relative} resolves outside the workspace {root}; it is not read")
    try:
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise WorkspaceError(
            f"{relative} in workspace {root} cannot be read ({error.strerror or error})"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise WorkspaceError(f"{relative} in workspace {root} is not a regular file")
        return _read_up_to(descriptor, limit)
    finally:
        os.close(descriptor)


def _git_listing(root: Path) -> list[tuple[bytes, str | None]] | None:
    """(path, blob id or None) for every file git lists, or None outside a usable work tree."""
    probe = run_git(root, "rev-parse", "--is-inside-work-tree", "--show-prefix")
    if probe is None or not probe.startswith(b"true"):
        return None
    is_subdirectory = probe.split(b"\n")[1].strip() != b""
    cached, changed = run_git_together(
        root,
        ("ls-files", "-z", "--stage"),
        ("ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard"),
    )
    if cached is None or changed is None:
        return None
    versions: dict[bytes, str | None] = {}
    for record in cached.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, blob_id, stage = meta.split(b" ")
        # Unmerged entries (stage > 0) have no single blob; submodules are not files here.
        if mode == b"160000":
            continue
        versions[path] = blob_id.decode("ascii") if stage == b"0" else None
    for record in changed.split(b"\0"):
        if not record:
            continue
        tag, path = record[:1], record[2:]
        if tag == b"?":
            versions[path.rstrip(b"/")] = None
        elif tag == b"C" and path in versions:
            versions[path] = None
    if not versions and is_subdirectory and _is_ignored_by_git(root):
        # The directory sits inside a repository that ignores it: treat it as a plain tree.
        return None
    return list(versions.items())


def _is_ignored_by_git(root: Path) -> bool:
    return run_git(root, "check-ignore", "-q", ".") is not None


class _Checker:
    """Applies the exclusion rules to candidate paths and collects the survivors."""

    def __init__(
        self,
        root: Path,
        max_file_bytes: int,
        known_sniffs: Mapping[str, tuple[_SniffKey, bool]],
    ) -> None:
        self.root = root
        self.root_text = str(root)
        self.max_file_bytes = max_file_bytes
        self.files: list[WorkspaceFile] = []
        self.skipped: Counter[SkipReason] = Counter()
        self.sniffs: _Sniffs = {}
        self._known_sniffs = known_sniffs
        self._directory_is_real: dict[str, bool] = {"": True}

    def consider_listed(self, raw_path: bytes, blob_id: str | None) -> None:
        try:
            relative = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            self.skipped["non_utf8_name"] += 1
            return
        parent = relative.rpartition("/")[0]
        if not self._is_real_directory(parent):
            self.skipped["symlinked_directory"] += 1
            return
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            self.skipped["missing"] += 1
            return
        except OSError:
            self.skipped["unreadable"] += 1
            return
        self._consider(relative, full, info, blob_id)

    def consider_walked(self, relative: str) -> None:
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except OSError:
            self.skipped["unreadable"] += 1
            return
        self._consider(relative, full, info, None)

    def _consider(
        self, relative: str, full: str, info: os.stat_result, blob_id: str | None
    ) -> None:
        name = relative.rpartition("/")[2]
        # git never lists its own metadata and the walk prunes `.git` directories; a `.git`
        # file (a linked worktree's pointer) is all that is left to refuse.
        if name == ".git":
            return
        if is_credential_file_name(name):
            self.skipped["credential"] += 1
            return
        target = full
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(full)
            if not _is_inside(target, self.root_text):
                self.skipped["symlink_outside_root"] += 1
                return
            if is_credential_file_name(target.rpartition("/")[2]):
                self.skipped["credential"] += 1
                return
            try:
                # realpath left no symlink to follow (one swapped in since is not regular).
                info = os.lstat(target)
            except OSError:
                self.skipped["missing"] += 1
                return
            if stat.S_ISDIR(info.st_mode):
                self.skipped["symlinked_directory"] += 1
                return
            # A symlink's git blob is its target path, not the content read here.
            blob_id = None
        if not stat.S_ISREG(info.st_mode):
            self.skipped["not_regular_file"] += 1
            return
        if info.st_size > self.max_file_bytes:
            self.skipped["too_large"] += 1
            return
        if name.rpartition(".")[2].lower() in _BINARY_SUFFIXES and "." in name:
            self.skipped["binary"] += 1
            return
        key: _SniffKey | None = None
        if blob_id is not None:
            key = (blob_id, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            known = self._known_sniffs.get(relative)
            if known is not None and known[0] == key:
                self.sniffs[relative] = known
                self._keep(relative, info, blob_id, is_binary=known[1])
                return
        try:
            descriptor = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            self.skipped["unreadable"] += 1
            return
        try:
            opened = os.fstat(descriptor)
            if not stat.S_ISREG(opened.st_mode):
                self.skipped["not_regular_file"] += 1
                return
            head = os.read(descriptor, _SNIFF_BYTES)
        except OSError:
            self.skipped["unreadable"] += 1
            return
        finally:
            os.close(descriptor)
        is_binary = b"\0" in head
        if key is not None:
            self.sniffs[relative] = (key, is_binary)
        self._keep(relative, opened, blob_id, is_binary=is_binary)

    def _keep(
        self, relative: str, info: os.stat_result, blob_id: str | None, *, is_binary: bool
    ) -> None:
        if is_binary:
            self.skipped["binary"] += 1
            return
        self.files.append(
            WorkspaceFile(
                path=relative, size=info.st_size, mtime_ns=info.st_mtime_ns, blob_id=blob_id
            )
        )

    def _is_real_directory(self, relative: str) -> bool:
        known = self._directory_is_real.get(relative)
        if known is not None:
            return known
        parent = relative.rpartition("/")[0]
        is_real = self._is_real_directory(parent)
        if is_real:
            try:
                is_real = stat.S_ISDIR(os.lstat(f"{self.root_text}/{relative}").st_mode)
            except OSError:
                is_real = False
        self._directory_is_real[relative] = is_real
        return is_real


def _walk_directory(
    root: Path, prefix: str, specs: list[tuple[str, GitIgnoreSpec]], checker: _Checker
) -> Iterator[str]:
    """Relative paths of the non-directory entries under `prefix` that no `.gitignore` ignores.

    Symlinked directories are yielded as entries, never descended into.
    """
    directory = f"{root}/{prefix}"
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError:
        checker.skipped["unreadable"] += 1
        return
    own_spec = next(
        (_load_gitignore(entry.path) for entry in entries if entry.name == ".gitignore"), None
    )
    if own_spec is not None:
        specs = [*specs, (prefix, own_spec)]
    for entry in entries:
        name = entry.name
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            checker.skipped["non_utf8_name"] += 1
            continue
        relative = f"{prefix}{name}"
        try:
            is_directory = entry.is_dir(follow_symlinks=False)
        except OSError:
            checker.skipped["unreadable"] += 1
            continue
        if is_directory:
            if name in _WALK_PRUNED_DIRECTORIES or _is_ignored(relative + "/", specs):
                continue
            yield from _walk_directory(root, relative + "/", specs, checker)
        elif not _is_ignored(relative, specs):
            yield relative


def _load_gitignore(path: str) -> GitIgnoreSpec | None:
    from pathspec import GitIgnoreSpec

    try:
        with Path(path).open("rb") as handle:
            text = handle.read(DEFAULT_MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    return GitIgnoreSpec.from_lines(text.splitlines())


def _is_ignored(relative: str, specs: list[tuple[str, GitIgnoreSpec]]) -> bool:
    # The deepest .gitignore with a matching pattern decides, as in git.
    for base, spec in reversed(specs):
        result = spec.check_file(relative[len(base) :])
        if result.include is not None:
            return result.include
    return False


def _is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _read_up_to(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
