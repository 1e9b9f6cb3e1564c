"""`search_lines`: a regular expression over a stream of files, with one time limit for it all.

The model's pattern runs in a child Python process, because a pattern such as `(a+)+$` can
backtrack for hours and `re` cannot be interrupted in-process. Files reach the child one at a
time over a pipe while the parent reads the next one, so a search over 100,000 files holds one
file in memory at a time, stops reading as soon as the child has its match limit, and the one
time limit covers reading and matching together.

The child watches the time itself, between files and every few hundred lines: when it is up, it
answers with the matches so far and how many files it searched, so a plain pattern over more
files than the time allows ends with what it found (`GrepOutcome.is_stopped`), not with an
error. Only a child that does not answer shortly after the time is up, one line holding its
pattern (a backtracking one) or its input, is killed, and the search reports why it was
stopped.
"""

from __future__ import annotations

import contextlib
import json
import re
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

# A child that has not answered this long after its time is up is killed.
_GRACE_S = 1.0

# Runs in a child interpreter started with -I -S: stdlib only, no promptkit import. The first
# line is the job; every further line is one [path, text] file. It answers with one JSON line.
_GREP_WORKER = r"""
import json, re, sys, time
stream = sys.stdin.buffer
job = json.loads(stream.readline())
end = time.monotonic() + job["seconds"]
regex = re.compile(job["pattern"], job["flags"])
limit, line_chars, shown = job["limit"], job["line_chars"], job["shown"]
matches, truncated, stopped, searched = [], False, False, 0
for record in stream:
    if time.monotonic() > end:
        stopped = True
        break
    path, content = json.loads(record)
    for number, line in enumerate(content.splitlines(), start=1):
        if number % 256 == 0 and time.monotonic() > end:
            stopped = True
            break
        if regex.search(line[:line_chars]):
            if len(matches) == limit:
                truncated = True
                break
            matches.append([path, number, line[:shown]])
    if truncated or stopped:
        break
    searched += 1
answer = {"matches": matches, "truncated": truncated, "stopped": stopped, "searched": searched}
sys.stdout.write(json.dumps(answer))
sys.stdout.flush()
"""

# A group holding a repeat, itself repeated: `(a+)+`, `(\w*)*`, `(x|y+){2,}`. Such a pattern can
# backtrack exponentially; one without can still be slow on a huge line, but not for long.
_NESTED_REPEAT = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]")


@dataclass(frozen=True)
class GrepMatch:
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class GrepOutcome:
    """The matches, whether more were left unshown, whether the time ran out before every file
    was searched (`is_stopped`), and how many files were searched whole."""

    matches: tuple[GrepMatch, ...]
    is_truncated: bool
    files_searched: int
    is_stopped: bool = False


def search_lines(
    pattern: str, flags: int, files: Iterable[tuple[str, str]], *, limit: int, timeout: float
) -> GrepOutcome | str:
    """Lines of `files` ((path, text) pairs, read lazily) matching `pattern`, at most `limit`,
    as far as the search got in `timeout` seconds; or a message saying why the search failed
    (the child did not answer in time, or could not run)."""
    seconds = max(timeout, 0.01)
    deadline = SYSTEM_CLOCK.monotonic() + seconds
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
        "seconds": seconds,
    }
    stop = threading.Event()
    fed_all = threading.Event()
    feeder = threading.Thread(
        target=_feed, args=(child.stdin, json.dumps(job), files, stop, fed_all), daemon=True
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
        returncode = _wait(child, deadline, stop)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return _not_answered(pattern, timeout)
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
        # Files left unsent (the time was up) were not searched either.
        is_stopped=bool(result["stopped"]) or not (result["truncated"] or fed_all.is_set()),
    )


def _wait(child: subprocess.Popen[bytes], deadline: float, stop: threading.Event) -> int:
    """The child's exit status, once it answered: by the deadline, or within the grace after it
    once no more files are sent (the child answers at its next look at the time, or at the end
    of its input); `TimeoutExpired` when it did neither."""
    try:
        return child.wait(timeout=max(deadline - SYSTEM_CLOCK.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        stop.set()
        return child.wait(timeout=_GRACE_S)


def _not_answered(pattern: str, timeout: float) -> str:
    if _NESTED_REPEAT.search(pattern):
        return (
            f"vfs_grep stopped after {timeout:g}s: the pattern repeats a group that repeats"
            " (such as (a+)+), which can backtrack without end on some lines; simplify it"
        )
    return (
        f"vfs_grep stopped after {timeout:g}s: one file took the whole time (a very long line,"
        " or a file slow to read); narrow path and glob, or simplify the pattern"
    )


def _feed(
    stream: IO[bytes],
    job: str,
    files: Iterable[tuple[str, str]],
    stop: threading.Event,
    fed_all: threading.Event,
) -> None:
    """Write the job, then one file per line, until the files end (`fed_all` is set), the child
    stops reading (it has its matches) or the search is stopped."""
    try:
        stream.write(job.encode() + b"\n")
        for path, content in files:
            if stop.is_set():
                return
            stream.write(json.dumps([path, content]).encode() + b"\n")
        fed_all.set()
    except (OSError, ValueError):
        # The child exited (match limit reached) or was killed: nothing more to send.
        return
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def _drain(stream: IO[bytes], into: list[bytes]) -> None:
    into.append(stream.read())
