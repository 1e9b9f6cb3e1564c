"""Where override files live under a store root, and which names may become paths there.

A prompt's overrides are `<root>/<ns segments>/<prompt_key>/<tag>.toml`; a shared section is
`<root>/_shared/<section_key>/<tag>.toml`. Every name is checked against the key rule before a
path is built, so `..`, `/`, upper case or NUL never reach the filesystem, and `_shared` can
never be a namespace (a key cannot start with `_`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from promptkit._names import KEY_RULE, is_valid_key, require_key
from promptkit.errors import OverridesError
from promptkit.hostfiles import is_inside
from promptkit.overrides._files import real_root
from promptkit.prompt import SectionPath

SHARED_DIR = "_shared"
FILE_SUFFIX = ".toml"


@dataclass(frozen=True)
class FilePlace:
    """What a file's place under the root says it holds: a prompt's or a shared section's."""

    kind: Literal["prompt", "shared"]
    tag: str
    ns: str = ""
    prompt_key: str = ""
    section_key: str = ""

    @property
    def label(self) -> str:
        """`ns/prompt_key` for a prompt file, `shared/section_key` for a shared one."""
        if self.kind == "shared":
            return f"shared/{self.section_key}"
        return f"{self.ns}/{self.prompt_key}"

    @property
    def relative_path(self) -> str:
        """The document's path under an overrides folder, `/`-separated: `ns/prompt_key/tag.toml`
        or `_shared/section_key/tag.toml` (a database store keys its rows by it too)."""
        if self.kind == "shared":
            return f"{SHARED_DIR}/{self.section_key}/{self.tag}{FILE_SUFFIX}"
        return f"{self.ns}/{self.prompt_key}/{self.tag}{FILE_SUFFIX}"


def require_ns(ns: object) -> str:
    """`ns` when it is one or more `/`-separated key-rule segments, else OverridesError."""
    if not isinstance(ns, str) or not ns:
        raise OverridesError(f"invalid prompt ns {ns!r}: expected one or more '/'-separated keys")
    for segment in ns.split("/"):
        require_key(segment, what=f"segment of prompt ns {ns!r}", error=OverridesError)
    return ns


def require_section_path(path: SectionPath | str) -> SectionPath:
    """A section path from a tuple of keys or an `a/b` string; every part follows the key rule."""
    parts = tuple(path.split("/")) if isinstance(path, str) else tuple(path)
    if not parts:
        raise OverridesError("invalid section path: it is empty")
    for part in parts:
        if not is_valid_key(part):
            raise OverridesError(
                f"invalid section path {path!r}: the part {part!r} is not a key ({KEY_RULE})"
            )
    return parts


def prompt_place(ns: str, prompt_key: str, tag: str) -> FilePlace:
    """The place of the overrides of (ns, prompt_key, tag); names are checked first."""
    require_ns(ns)
    require_key(prompt_key, what="prompt key", error=OverridesError)
    require_key(tag, what="tag", error=OverridesError)
    return FilePlace("prompt", tag=tag, ns=ns, prompt_key=prompt_key)


def shared_place(section_key: str, tag: str) -> FilePlace:
    """The place of the shared override of `section_key` under `tag`; names checked first."""
    require_key(section_key, what="shared section key", error=OverridesError)
    require_key(tag, what="tag", error=OverridesError)
    return FilePlace("shared", tag=tag, section_key=section_key)


def file_at(root: Path, place: FilePlace) -> Path:
    """The file of `place` under `root`."""
    if place.kind == "shared":
        return root / SHARED_DIR / place.section_key / (place.tag + FILE_SUFFIX)
    return root.joinpath(*place.ns.split("/"), place.prompt_key, place.tag + FILE_SUFFIX)


def prompt_file(root: Path, ns: str, prompt_key: str, tag: str) -> Path:
    """The file holding the overrides of (ns, prompt_key, tag); names are checked first."""
    return file_at(root, prompt_place(ns, prompt_key, tag))


def shared_file(root: Path, section_key: str, tag: str) -> Path:
    """The file holding the shared override of `section_key` under `tag`."""
    return file_at(root, shared_place(section_key, tag))


def place_of(root: Path, file: Path) -> FilePlace:
    """What `file` (under `root`) must hold, from its place; OverridesError when it fits none."""
    try:
        parts = file.relative_to(root).parts
    except ValueError:
        raise OverridesError(f"{file} is not under the overrides root {root}") from None
    return place_at(parts, file)


def place_at(parts: tuple[str, ...], file: Path | str) -> FilePlace:
    """What a document at relative path `parts` must hold; OverridesError naming `file` when the
    path fits no place."""
    if not parts:
        raise OverridesError(f"{file}: not an override file; it names no place")
    stem = parts[-1].removesuffix(FILE_SUFFIX)
    names = (*parts[:-1], stem)
    if parts[0] == SHARED_DIR:
        if len(parts) == 3 and all(is_valid_key(name) for name in names[1:]):
            return FilePlace("shared", tag=stem, section_key=parts[1])
        raise OverridesError(
            f"{file}: not a shared override file; expected {SHARED_DIR}/<section_key>/<tag>.toml"
            " with names that are lower-case keys"
        )
    if len(parts) >= 3 and all(is_valid_key(name) for name in names):
        return FilePlace("prompt", tag=stem, ns="/".join(parts[:-2]), prompt_key=parts[-2])
    raise OverridesError(
        f"{file}: not an override file; expected <ns>/<prompt_key>/<tag>.toml (or"
        f" {SHARED_DIR}/<section_key>/<tag>.toml) with names that are lower-case keys"
    )


def override_files(root: Path) -> list[Path]:
    """Every `*.toml` name under `root` that is not a folder, sorted: FIFOs, sockets and
    symlinks included, so a check reports them; lock and temp files are not listed. Folders
    that lead out of the root are not entered (`escaping_folders`)."""
    return _walk(root)[0]


def escaping_folders(root: Path) -> list[Path]:
    """The folders under `root` that are symlinks to somewhere outside it, sorted."""
    return _walk(root)[1]


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    if not root.is_dir():
        return [], []
    inside = real_root(root)
    seen = {inside}
    files: list[Path] = []
    escaping: list[Path] = []
    for folder, folders, names in os.walk(root, followlinks=True):
        entered: list[str] = []
        for name in sorted(folders):
            real = os.path.realpath(Path(folder, name))
            if not is_inside(real, inside):
                escaping.append(Path(folder, name))
            elif real not in seen:  # a link back into the tree would loop forever
                seen.add(real)
                entered.append(name)
        folders[:] = entered
        files.extend(Path(folder, name) for name in names if name.endswith(FILE_SUFFIX))
    return sorted(files), sorted(escaping)
