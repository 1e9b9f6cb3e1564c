"""`search_lines`: a regular expression over a stream of files, with one time limit for it all.

The model's pattern runs in a child Python process, because a pattern such as `(a+)+$` can
backtrack for hours and `re` cannot be interrupted in-process. Files reach the child one at a
time over a pipe while the parent reads the next one, so a search over 100,000 files holds one
file in memory at a time, stops reading as soon as the child has its match limit, and the one
deadline covers reading and matching together: past it the child is killed and the search
reports that it was stopped.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from promptkit.clock import SYSTEM_CLOCK

__all__ = ["GrepMatch", "GrepOutcome", "search_lines"]

# Lines longer than this are searched in their first part only; minified files would
# otherwise make each match attempt arbitrarily expensive.
GREP_LINE_CHARS = 4000
GREP_SHOWN_CHARS = 300

# Runs in a child interpreter started with -I -S: stdlib only, no promptkit import. The first
# line is the job; every further line is one [path, text] file. It answers with one JSON line.
_GREP_WORKER = r"""
import json, re, sys
stream = sys.stdin.buffer
job = json.loads(stream.readline())
regex = re.compile(job["pattern"], job["flags"])
limit, line_chars, shown = job["limit"], job["line_chars"], job["shown"]
matches, truncated, searched = [], False, 0
for record in stream:
    path, content = json.loads(record)
    searched += 1
    for number, line in enumerate(content.splitlines(), start=1):
        if regex.search(line[:line_chars]):
            if len(matches) == limit:
                truncated = True
                break
            matches.append([path, number, line[:shown]])
    if truncated:
        break
sys.stdout.write(json.dumps({"matches": matches, "truncated": truncated, "searched": searched}))
sys.stdout.flush()
"""


@dataclass(frozen=True)
class GrepMatch:
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class GrepOutcome:
    """The matches, whether more were left unshown, and how many files were searched."""

    matches: tuple[GrepMatch, ...]
    is_truncated: bool
    files_searched: int


def search_lines(
    pattern: str, flags: int, files: Iterable[tuple[str, str]], *, limit: int, timeout: float
) -> GrepOutcome | str:
    """Lines of `files` ((path, text) pairs, read lazily) matching `pattern`, at most `limit`;
    or a message saying why the search was stopped (time limit, child failure)."""
    deadline = SYSTEM_CLOCK.monotonic() + max(timeout, 0.01)
    try:
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GREP_WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as error:
        return f"vfs_grep could not start its search process: {error.strerror or error}"
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    job = {
        "pattern": pattern,
        "flags": flags,
        "limit": limit,
        "line_chars": GREP_LINE_CHARS,
        "shown": GREP_SHOWN_CHARS,
    }
    stop = threading.Event()
    feeder = threading.Thread(
        target=_feed, args=(child.stdin, json.dumps(job), files, stop), daemon=True
    )
    output: list[bytes] = []
    errors: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(child.stdout, output), daemon=True),
        threading.Thread(target=_drain, args=(child.stderr, errors), daemon=True),
    ]
    for thread in (feeder, *readers):
        thread.start()
    try:
        returncode = child.wait(timeout=max(deadline - SYSTEM_CLOCK.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        stop.set()
        child.kill()
        child.wait()
        return (
            f"vfs_grep stopped after {timeout:g}s: the pattern is too slow on these files"
            " (nested quantifiers such as (a+)+ backtrack exponentially) or there are too"
            " many files; simplify it or narrow path and glob"
        )
    finally:
        stop.set()
        for thread in (feeder, *readers):
            thread.join(timeout=5)
    if returncode != 0:
        last_line = (b"".join(errors).decode(errors="replace").strip().splitlines() or [""])[-1]
        return f"vfs_grep failed: {last_line or 'no error output'}"
    result = json.loads(b"".join(output))
    return GrepOutcome(
        matches=tuple(
            GrepMatch(str(path), int(number), str(text)) for path, number, text in result["matches"]
        ),
        is_truncated=bool(result["truncated"]),
        files_searched=int(result["searched"]),
    )


def _feed(
    stream: IO[bytes], job: str, files: Iterable[tuple[str, str]], stop: threading.Event
) -> None:
    """Write the job, then one file per line, until the files end, the child stops reading
    (it has its matches) or the search is stopped."""
    try:
        stream.write(job.encode() + b"\n")
        for path, content in files:
            if stop.is_set():
                break
            stream.write(json.dumps([path, content]).encode() + b"\n")
    except (OSError, ValueError):
        # The child exited (match limit reached) or was killed: nothing more to send.
        return
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def _drain(stream: IO[bytes], into: list[bytes]) -> None:
    into.append(stream.read())
