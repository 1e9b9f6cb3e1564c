"""Files promptkit never reads, known from their names alone: credentials and binary formats.

The listing leaves them out, and the read path checks the name it finally opens again, so a
symlink swapped in after listing cannot lead a read to `.env`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from itertools import compress, count, repeat
from operator import itemgetter

__all__ = [
    "could_be_left_out_by_name",
    "has_binary_suffix",
    "has_undecodable_name",
    "is_credential_file_name",
    "is_unsafe_name",
]

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
    # A cloud service account's key file (`service-account.json`, Firebase's
    # `serviceAccountKey.json`): a private key in JSON.
    "*service-account*.json",
    "*service_account*.json",
    "*serviceaccount*.json",
    "secrets.json",
    "secrets.toml",
    "secrets.yaml",
    "secrets.yml",
)
_CREDENTIAL_NAME = re.compile("|".join(fnmatch.translate(glob) for glob in _CREDENTIAL_NAME_GLOBS))


def _literal_parts(
    globs: tuple[str, ...],
) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], re.Pattern[str]]:
    """What a name must have to match one of `globs` (lower case, `*` their only wildcard):
    be a glob without a star, start with the text before a glob's first star, or, for a glob
    that starts with a star, contain the text between its first and last star (`*x*.json`
    needs "x") or else end with the text after its last star (`*.pem`). A test of these is
    never wrong to say no, and spares the pattern almost every name of a large tree: asking a
    starred middle rather than a common ending such as ".json" spares every JSON file too."""
    exact = frozenset(glob for glob in globs if "*" not in glob)
    starts = tuple(glob.split("*")[0] for glob in globs if "*" in glob and glob[0] != "*")
    starred = [glob for glob in globs if glob.startswith("*")]
    inner = [middle for glob in starred if (middle := _starred_middle(glob))]
    ends = tuple(glob.rsplit("*", 1)[1] for glob in starred if not _starred_middle(glob))
    # With no starred middle, "(?!)": a pattern that matches nothing.
    return exact, starts, ends, re.compile("|".join(map(re.escape, inner)) or "(?!)")


def _starred_middle(glob: str) -> str:
    """The longest text between two stars of `glob` ("" when there is none)."""
    return max(glob.split("*")[1:-1], key=len, default="")


_CREDENTIAL_EXACT, _CREDENTIAL_STARTS, _CREDENTIAL_ENDS, _CREDENTIAL_INNER = _literal_parts(
    _CREDENTIAL_NAME_GLOBS
)

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

# C0 controls and DEL: a newline in a name would split one listed path into two lines of a tool
# result or digest, and a model cannot type the name back.
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")
# What `surrogateescape` decoding makes of bytes that are not UTF-8.
_UNDECODABLE = re.compile("[\udc80-\udcff]")


def is_credential_file_name(name: str) -> bool:
    """Whether a file called `name` (no directory) holds credentials by convention."""
    lowered = name.lower()
    if not (
        lowered in _CREDENTIAL_EXACT
        or lowered.startswith(_CREDENTIAL_STARTS)
        or lowered.endswith(_CREDENTIAL_ENDS)
        or _CREDENTIAL_INNER.search(lowered) is not None
    ):
        return False
    return _CREDENTIAL_NAME.match(lowered) is not None


def has_binary_suffix(name: str) -> bool:
    """Whether `name` ends in the extension of a known binary format (`logo.png`)."""
    _, dot, suffix = name.rpartition(".")
    return bool(dot) and suffix.lower() in _BINARY_SUFFIXES


def is_unsafe_name(relative_path: str) -> bool:
    """Whether `relative_path` holds a control character (a newline, a tab, an escape)."""
    return _UNSAFE_NAME.search(relative_path) is not None


def has_undecodable_name(relative_path: str) -> bool:
    """Whether `relative_path`, decoded with `surrogateescape`, had bytes that are not UTF-8."""
    return not relative_path.isascii() and _UNDECODABLE.search(relative_path) is not None


def could_be_left_out_by_name(names: Sequence[str]) -> set[int]:
    """The positions in `names` (file names, no directory) of every name that
    `is_credential_file_name` or `has_binary_suffix` may say yes to, and of a few that they say
    no to: ask them about these, and no other name needs asking.

    Each test runs over the whole column at once (`map` over C functions, no Python call per
    name), so a listing of 100,000 names pays a few passes over them rather than a Python call
    per name per test.
    """
    lowered = list(map(str.lower, names))
    suffixes = map(itemgetter(2), map(str.rpartition, lowered, repeat(".")))
    tests: tuple[Iterable[object], ...] = (
        map(_CREDENTIAL_EXACT.__contains__, lowered),
        map(str.startswith, lowered, repeat(_CREDENTIAL_STARTS)),
        map(str.endswith, lowered, repeat(_CREDENTIAL_ENDS)),
        map(_CREDENTIAL_INNER.search, lowered),
        # A name with no dot gives itself as its "suffix": a false alarm the check corrects.
        map(_BINARY_SUFFIXES.__contains__, suffixes),
    )
    return set().union(*(compress(count(), says_yes) for says_yes in tests))
