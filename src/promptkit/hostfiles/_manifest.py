"""Where a workspace came from and which state it is in: `WorkspaceManifest` and its fingerprint.

The manifest follows the `workspace.manifest.json` format (strategy, source, ref, head_sha,
created_at, has_history, is_shallow, notes) and adds `fingerprint`: a sha256 over the sorted
(path, size, git blob id or mtime) of the selected files. A digest records both head_sha and
fingerprint, so it can tell later that the workspace it describes has moved on, even when the
change is an uncommitted edit. Git state is read through the git CLI; a directory that is not a
repository is described from the filesystem alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from promptkit._durable import write_atomically
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import WorkspaceError
from promptkit.hostfiles._listing import (
    DEFAULT_MAX_FILE_BYTES,
    FileSelection,
    WorkspaceFile,
    select_files,
)

if TYPE_CHECKING:
    from promptkit.hostfiles._git import RunningGit

__all__ = [
    "MANIFEST_FILE_NAME",
    "PendingManifest",
    "WorkspaceManifest",
    "WorkspaceStrategy",
    "begin_manifest",
    "describe_workspace",
    "fingerprint_files",
    "manifest_for_selection",
    "strip_url_credentials",
    "workspace_fingerprint",
]

MANIFEST_FILE_NAME = "workspace.manifest.json"

WorkspaceStrategy = Literal["git-clone", "snapshot", "existing"]

_T = TypeVar("_T")

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class WorkspaceManifest:
    """Provenance of a workspace, in the `workspace.manifest.json` shape plus `fingerprint`.

    `created_at` is an aware UTC datetime with whole seconds. `ref` is the checked-out branch
    (None when HEAD is detached or outside git); `head_sha` is None without commits.
    """

    strategy: WorkspaceStrategy
    source: str
    created_at: datetime
    has_history: bool
    is_shallow: bool
    ref: str | None = None
    head_sha: str | None = None
    notes: tuple[str, ...] = ()
    fingerprint: str | None = None

    def to_json(self) -> str:
        """The manifest as `workspace.manifest.json` text; optional fields omitted when unset."""
        document: dict[str, Any] = {"strategy": self.strategy, "source": self.source}
        if self.ref is not None:
            document["ref"] = self.ref
        if self.head_sha is not None:
            document["head_sha"] = self.head_sha
        document["created_at"] = _rfc3339(self.created_at)
        document["has_history"] = self.has_history
        document["is_shallow"] = self.is_shallow
        if self.notes:
            document["notes"] = list(self.notes)
        if self.fingerprint is not None:
            document["fingerprint"] = self.fingerprint
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, origin: str = MANIFEST_FILE_NAME) -> WorkspaceManifest:
        """Parse `workspace.manifest.json` text; WorkspaceError names `origin` and the field."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise WorkspaceError(
                f"{origin} line {error.lineno}: not valid JSON ({error.msg}); "
                "rewrite it with WorkspaceManifest.to_json"
            ) from None
        if not isinstance(document, dict):
            raise WorkspaceError(f"{origin}: expected a JSON object at the top level")
        return cls(
            strategy=_strategy_field(document, origin),
            source=_field(document, "source", str, origin),
            created_at=_timestamp_field(document, origin),
            has_history=_field(document, "has_history", bool, origin),
            is_shallow=_field(document, "is_shallow", bool, origin),
            ref=_optional_field(document, "ref", str, origin),
            head_sha=_optional_field(document, "head_sha", str, origin),
            notes=_notes_field(document, origin),
            fingerprint=_optional_field(document, "fingerprint", str, origin),
        )

    def write(self, directory: str | os.PathLike[str]) -> Path:
        """Write `workspace.manifest.json` into `directory` atomically; returns its path."""
        target = Path(directory) / MANIFEST_FILE_NAME
        try:
            write_atomically(target, self.to_json())
        except OSError as error:
            raise WorkspaceError(
                f"cannot write {target} ({error.strerror or error}): "
                "check that the directory exists and is writable"
            ) from None
        return target

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> WorkspaceManifest:
        """Read a `workspace.manifest.json` file written by `write` (or by another tool)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise WorkspaceError(
                f"cannot read workspace manifest {path} ({error}): check the path"
            ) from None
        return cls.from_json(text, origin=str(path))


def describe_workspace(
    path: str | os.PathLike[str],
    *,
    strategy: WorkspaceStrategy = "existing",
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> WorkspaceManifest:
    """The manifest of the workspace at `path`, read through git in a repository.

    `strategy` records how the caller prepared the directory ("existing" when it was there
    already). The source is the `origin` remote's URL, credentials removed, or the directory's
    absolute path. Raises WorkspaceError when `path` is not a directory.
    """
    selection = select_files(path, max_file_bytes=max_file_bytes)
    return manifest_for_selection(selection, strategy=strategy)


def workspace_fingerprint(
    path: str | os.PathLike[str], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> str:
    """The fingerprint `describe_workspace` would record for `path` now (file listing only)."""
    return fingerprint_files(select_files(path, max_file_bytes=max_file_bytes).files)


def fingerprint_files(files: Iterable[WorkspaceFile]) -> str:
    """sha256 hex over the sorted (path, size, blob id or mtime) of `files`."""
    # Paths are unique, so sorting the named tuples sorts by path.
    lines = [
        f"{path}\0{size}\0blob:{blob_id}\n" if blob_id else f"{path}\0{size}\0mtime:{mtime_ns}\n"
        for path, size, mtime_ns, blob_id in sorted(files)
    ]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def manifest_for_selection(
    selection: FileSelection,
    *,
    strategy: WorkspaceStrategy = "existing",
    fingerprint: str | None = None,
) -> WorkspaceManifest:
    """The manifest of the workspace `selection` was taken from (shares its file listing);
    `fingerprint` is `fingerprint_files(selection.files)` when the caller has it already (a
    listing process computes it beside the listing)."""
    if fingerprint is None:
        fingerprint = fingerprint_files(selection.files)
    pending = begin_manifest(selection.root, ask_git=selection.from_git)
    return pending.result(from_git=selection.from_git, fingerprint=fingerprint, strategy=strategy)


# What a manifest asks git: the commit checked out, the branch, whether the clone is shallow,
# and where it came from.
_GIT_FACTS = (
    ("rev-parse", "-q", "--verify", "HEAD^{commit}"),
    ("symbolic-ref", "-q", "HEAD"),
    ("rev-parse", "--is-shallow-repository"),
    ("config", "--get", "remote.origin.url"),
)


def begin_manifest(root: Path, *, ask_git: bool = True) -> PendingManifest:
    """Start the manifest of the workspace at `root` (resolved): git is asked its facts in
    other processes now (unless the caller knows git cannot answer), and `result()`, given the
    listing's fingerprint, completes it. A listing helper asks them while it lists, so its
    manifest is of the moment it listed."""
    # Imported here: a module that only needs `WorkspaceManifest` (the digest's slice type)
    # does not load how git is asked.
    from promptkit.hostfiles._git import start_git_together

    return PendingManifest(
        root=root,
        created_at=SYSTEM_CLOCK.now().replace(microsecond=0),
        git_facts=start_git_together(root, *_GIT_FACTS) if ask_git else None,
    )


@dataclass(frozen=True)
class PendingManifest:
    """A manifest under way (see `begin_manifest`)."""

    root: Path
    created_at: datetime
    git_facts: RunningGit | None

    def result(
        self, *, from_git: bool, fingerprint: str, strategy: WorkspaceStrategy = "existing"
    ) -> WorkspaceManifest:
        """The manifest of a listing taken through git when `from_git`, with `fingerprint`."""
        facts = self.git_facts.texts() if self.git_facts is not None else [None] * len(_GIT_FACTS)
        head_sha, branch, shallow, remote = facts
        if not from_git:
            # A `.git` that git would not read: git is missing, or it refused a repository
            # owned by another user (safe.directory). Either way the walk stood in for it.
            note = (
                "git could not read the repository here (is git installed, and is the"
                " directory listed in safe.directory?): files were selected by walking it"
                if (self.root / ".git").exists()
                else "not a git repository: files were selected by walking the directory "
                "and honouring .gitignore files"
            )
            return WorkspaceManifest(
                strategy=strategy,
                source=str(self.root),
                created_at=self.created_at,
                has_history=False,
                is_shallow=False,
                notes=(note,),
                fingerprint=fingerprint,
            )
        notes: list[str] = []
        if head_sha is not None and not _SHA.fullmatch(head_sha):
            head_sha = None
        ref = branch.removeprefix("refs/heads/") if branch else None
        is_shallow = shallow == "true"
        if head_sha is None:
            notes.append("repository has no commits yet")
        if branch is None:
            notes.append("HEAD is detached")
        if is_shallow:
            notes.append("shallow clone: history is truncated")
        return WorkspaceManifest(
            strategy=strategy,
            source=strip_url_credentials(remote) if remote else str(self.root),
            created_at=self.created_at,
            has_history=head_sha is not None and not is_shallow,
            is_shallow=is_shallow,
            ref=ref,
            head_sha=head_sha,
            notes=tuple(notes),
            fingerprint=fingerprint,
        )


def strip_url_credentials(url: str) -> str:
    """`url` without user info, query or fragment: `https://tok@host/r?x` -> `https://host/r`.

    A user name alone can be a token (`https://<token>@github.com/...`), so it goes too;
    scp-like remotes (`git@host:org/repo`) carry no secret and are kept as they are.
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    authority, slash, path = rest.partition("/")
    host = authority.rpartition("@")[2]
    path = path.split("?", 1)[0].split("#", 1)[0]
    return f"{scheme}://{host}{slash}{path}"


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _field(document: dict[str, Any], name: str, kind: type[_T], origin: str) -> _T:
    if name not in document:
        raise WorkspaceError(f"{origin}: required field {name!r} is missing")
    value = document[name]
    if not isinstance(value, kind):
        raise WorkspaceError(
            f"{origin}: field {name!r} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _optional_field(document: dict[str, Any], name: str, kind: type[_T], origin: str) -> _T | None:
    if document.get(name) is None:
        return None
    return _field(document, name, kind, origin)


def _strategy_field(document: dict[str, Any], origin: str) -> WorkspaceStrategy:
    value = _field(document, "strategy", str, origin)
    for strategy in get_args(WorkspaceStrategy):
        if value == strategy:
            return strategy  # type: ignore[no-any-return]
    allowed = ", ".join(get_args(WorkspaceStrategy))
    raise WorkspaceError(f"{origin}: field 'strategy' is {value!r}; expected one of {allowed}")


def _timestamp_field(document: dict[str, Any], origin: str) -> datetime:
    value = _field(document, "created_at", str, origin)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise WorkspaceError(
            f"{origin}: field 'created_at' is {value!r}; expected an RFC 3339 timestamp "
            "with a time zone, such as 2026-01-02T12:34:56Z"
        )
    return moment.astimezone(UTC)


def _notes_field(document: dict[str, Any], origin: str) -> tuple[str, ...]:
    notes = _optional_field(document, "notes", list, origin)
    if notes is None:
        return ()
    if not all(isinstance(note, str) for note in notes):
        raise WorkspaceError(f"{origin}: field 'notes' must be a list of strings")
    return tuple(notes)
