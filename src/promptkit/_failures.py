"""How the CLI and the REPL report a failure: one line and an exit status that says what kind.

Environment failures (a full disk, a read-only folder, a path that is a file, a symlink loop,
bytes that are not UTF-8, a missing editor) are ordinary events for a command-line tool, so
they are reported like promptkit's own errors: what failed and where, never a traceback. A
promptkit error caused by one (a session that could not be written because the disk is full)
keeps its own message and takes the exit status of its cause. The statuses follow BSD
sysexits, so scripts can tell "fix your input" from "fix your machine":

| status | meaning |
| --- | --- |
| 2 | invalid input or usage: the message says what to change |
| 65 | input is not UTF-8 text |
| 66 | a file, folder or program that is needed does not exist |
| 73 | a path that must be a folder is a file (or the reverse), or a symlink loop |
| 74 | the disk is full, a file-size limit was hit, the filesystem is read-only, other I/O |
| 77 | permission denied |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from promptkit.errors import PromptkitError

EXIT_USAGE = 2
EXIT_NOT_UTF8 = 65
EXIT_NOT_FOUND = 66
EXIT_WRONG_KIND_OF_PATH = 73
EXIT_IO = 74
EXIT_PERMISSION = 77
EXIT_INTERRUPTED = 130

_STATUS_BY_ERRNO = {
    errno.ENOENT: EXIT_NOT_FOUND,
    errno.ENOTDIR: EXIT_WRONG_KIND_OF_PATH,
    errno.EISDIR: EXIT_WRONG_KIND_OF_PATH,
    errno.EEXIST: EXIT_WRONG_KIND_OF_PATH,
    errno.ELOOP: EXIT_WRONG_KIND_OF_PATH,
    errno.EACCES: EXIT_PERMISSION,
    errno.EPERM: EXIT_PERMISSION,
}

# What to do about each kind, said after the failure itself.
_ADVICE = {
    errno.ENOSPC: "free some space and run the command again",
    errno.EDQUOT: "free some space (you are over your disk quota) and run the command again",
    errno.EFBIG: "the file would pass the file-size limit (ulimit -f); raise it or write less",
    errno.EROFS: "choose a location on a writable filesystem",
    errno.EACCES: "check the permissions of that path or choose another location",
    errno.EPERM: "check the permissions of that path or choose another location",
    errno.ENOTDIR: "a file is in the way of a folder; move it or choose another location",
    errno.EEXIST: "a file is in the way of a folder; move it or choose another location",
    errno.EISDIR: "a folder is where a file is expected; choose a file",
    errno.ELOOP: "the symbolic links there point at each other; fix or remove them",
    errno.ENOENT: "check the path",
}


@dataclass(frozen=True)
class Failure:
    """A failure as the CLI reports it: one line of text and the exit status."""

    message: str
    status: int


def describe_failure(error: BaseException) -> Failure | None:
    """The report of `error`, or None when it is not a failure the CLI should explain (a bug,
    which keeps its traceback)."""
    cause = _environment_cause(error)
    if isinstance(error, PromptkitError):
        return Failure(_one_line(str(error)), _status_of(cause) if cause else EXIT_USAGE)
    if cause is None:
        return None
    return Failure(_one_line(_describe_cause(cause)), _status_of(cause))


def _environment_cause(error: BaseException) -> BaseException | None:
    """The OSError or UnicodeDecodeError behind `error` (itself, or down its causes).

    promptkit's own errors that also subclass OSError (WorkspaceError, for `except OSError`
    callers) are not environment causes themselves: only what they were raised from is. Nor is
    a time-out (`TimeoutError` is an OSError too): a deadline that passed is the run's failure,
    not the machine's.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        is_own = isinstance(current, PromptkitError | TimeoutError)
        if not is_own and (
            isinstance(current, OSError | UnicodeDecodeError) or _is_symlink_loop(current)
        ):
            return current
        current = current.__cause__ or current.__context__
    return None


def _is_symlink_loop(error: BaseException) -> bool:
    # pathlib before Python 3.13 reports a symlink loop met by `resolve()` as RuntimeError.
    return type(error) is RuntimeError and str(error).startswith("Symlink loop from")


def _status_of(cause: BaseException) -> int:
    if isinstance(cause, UnicodeDecodeError):
        return EXIT_NOT_UTF8
    if isinstance(cause, OSError) and cause.errno is not None:
        return _STATUS_BY_ERRNO.get(cause.errno, EXIT_IO)
    return EXIT_WRONG_KIND_OF_PATH if _is_symlink_loop(cause) else EXIT_IO


def _describe_cause(cause: BaseException) -> str:
    if isinstance(cause, UnicodeDecodeError):
        return f"input is not UTF-8 text ({cause.reason} at byte {cause.start}); save it as UTF-8"
    if _is_symlink_loop(cause):
        where = str(cause).removeprefix("Symlink loop from ").strip("'\"")
        return f"{where}: {_ADVICE[errno.ELOOP]}"
    assert isinstance(cause, OSError)
    where = cause.filename if cause.filename is not None else "(no path)"
    what = cause.strerror or type(cause).__name__
    advice = _ADVICE.get(cause.errno or 0, "check the path and the disk")
    return f"{where}: {what}; {advice}"


def _one_line(text: str) -> str:
    from promptkit.secrets import redact_secrets

    return redact_secrets(" ".join(part.strip() for part in text.splitlines() if part.strip()))
