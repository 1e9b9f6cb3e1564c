"""How the REPL and the command line describe things to a person: a resolved digest, an override
entry's state and author, a response's usage, and a session's history. Plain text, one fact a
line; nothing here reads or writes state.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from promptkit.clock import SYSTEM_CLOCK
from promptkit.repl._progress import tool_call_text

if TYPE_CHECKING:
    from pathlib import Path

    from promptkit.adapters import PromptResponse, TokenUsage
    from promptkit.digest import DigestResolution
    from promptkit.overrides import EntryState
    from promptkit.prompt import Prompt, SectionOverride
    from promptkit.session import PromptExecuted, ToolInvoked


def resolution_lines(resolution: DigestResolution, *, origin: str) -> list[str]:
    """How `digest status` and the REPL's `digest` describe a resolved digest, one aligned
    `name: value` line each: the section, `origin` (as the caller words where the body came
    from), when it was updated and how long ago, its author, whether it is fresh, and the
    stored override a session digest hides, if any."""
    lines = [f"section:   {resolution.section_key}", f"origin:    {origin}"]
    if resolution.updated_at is not None:
        age = describe_age(SYSTEM_CLOCK.now() - resolution.updated_at)
        lines.append(f"updated:   {resolution.updated_at.isoformat()} ({age} ago)")
    if resolution.author is not None:
        lines.append(f"author:    {resolution.author}")
    lines.append(f"freshness: {freshness_text(resolution)}")
    if resolution.shadowed_override is not None:
        lines.append(
            f"shadows:   {resolution.shadowed_override}: the session digest wins over this"
            " reviewed override"
        )
    return lines


def freshness_text(resolution: DigestResolution) -> str:
    """`fresh`, `stale (<why>; head <old> -> <new>)`, `unknown (<why>)` or `none (...)`: how
    current a resolved digest is, in the words `digest status` prints after `freshness:`."""
    freshness = resolution.freshness
    if resolution.origin == "placeholder":
        return "none (nothing to compare)"
    if freshness is None:
        if resolution.origin == "session":
            return "unknown (the digest records no workspace provenance)"
        return "unknown (the override records no workspace provenance)"
    if freshness.is_stale is None:
        return f"unknown ({freshness.reason})"
    if not freshness.is_stale:
        return "fresh"
    recorded, current = resolution.provenance, freshness.current
    detail = [freshness.reason]
    if recorded is not None and current is not None:
        if recorded.head_sha != current.head_sha:
            detail.append(f"head {_short(recorded.head_sha)} -> {_short(current.head_sha)}")
        # A committed digest is judged by its content fingerprint: stat-based ones differ by
        # checkout.
        if resolution.origin == "session" and recorded.fingerprint != current.fingerprint:
            detail.append(
                f"fingerprint {_short(recorded.fingerprint)} -> {_short(current.fingerprint)}"
            )
    return f"stale ({'; '.join(detail)})"


def _short(value: str | None) -> str:
    return value[:12] if value else "none"


def describe_age(elapsed: timedelta) -> str:
    """A timedelta as `45s`, `3m 12s`, `2h 5m` or `4d 3h`."""
    seconds = max(0, int(elapsed.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {seconds}s"
    return f"{seconds}s"


def status_text(state: EntryState) -> str:
    """`applies`, or `NOT APPLIED: <why>`: how `show` and the REPL's `overrides` mark an entry."""
    if state.status == "fresh":
        return "applies"
    return f"NOT APPLIED: {state.describe()}"


def author_text(entry: SectionOverride) -> str:
    """`by <kind> (<model>), <updated at>`: who wrote a section override, and when."""
    model = f" ({entry.source.model})" if entry.source.model else ""
    return f"by {entry.source.kind}{model}, {entry.updated_at.isoformat()}"


def usage_line(response: PromptResponse[Any]) -> str:
    """`provider model, N tool calls, I input / O output tokens` for one response."""
    calls = len(response.tool_calls)
    return (
        f"{response.provider} {response.model}, {calls} tool call{'' if calls == 1 else 's'},"
        f" {_tokens(response.usage.input_tokens, response.usage.output_tokens)}"
        f", {response.usage.cost_text}"
    )


def history_lines(executed: Iterable[PromptExecuted], calls: Iterable[ToolInvoked]) -> list[str]:
    """Each executed prompt with the tool calls made for it, oldest first.

    A tool call belongs to the next answer of the same prompt; calls with no answer after them
    (an evaluation that failed) are listed last. The last line totals the tokens of every
    answer, cache writes and reasoning included.
    """
    # Loaded on use, as the other adapter names here: the report module stays light to import.
    from promptkit.adapters import executed_token_usage

    executed = tuple(executed)
    pending = sorted(calls, key=lambda call: call.invoked_at)
    lines: list[str] = []
    for number, answer in enumerate(sorted(executed, key=lambda e: e.executed_at), start=1):
        mine = [
            call
            for call in pending
            if (call.prompt_ns, call.prompt_key) == (answer.prompt_ns, answer.prompt_key)
            and call.invoked_at <= answer.executed_at
        ]
        pending = [call for call in pending if call not in mine]
        lines.append(
            f"{number}. {answer.executed_at.isoformat(timespec='seconds')}"
            f" {answer.prompt_ns}/{answer.prompt_key}: {answer.provider} {answer.model},"
            f" {len(mine)} tool call{'' if len(mine) == 1 else 's'},"
            f" {_tokens(answer.input_tokens, answer.output_tokens, answer.cached_tokens)}"
            f", {_answer_cost(answer.cost)}, {answer.duration_s:.2f}s"
        )
        lines += [_call_line(call) for call in mine]
    if pending:
        lines.append("tool calls of evaluations that did not finish:")
        lines += [_call_line(call) for call in pending]
    if executed:
        total = executed_token_usage(executed)
        lines.append(f"total: {_total_text(total)}, {total.cost_text}")
    return lines


def _total_text(usage: TokenUsage) -> str:
    text = _tokens(usage.input_tokens, usage.output_tokens)
    extra = [
        f"{count} {what}"
        for count, what in (
            (usage.cached_tokens, "cached"),
            (usage.cache_write_tokens, "written to the cache"),
            (usage.reasoning_tokens, "reasoning"),
        )
        if count
    ]
    return f"{text} ({', '.join(extra)})" if extra else text


def _call_line(call: ToolInvoked) -> str:
    return f"   tool {tool_call_text(call)}"


def _tokens(input_tokens: int | None, output_tokens: int | None, cached: int | None = None) -> str:
    if input_tokens is None and output_tokens is None:
        return "tokens not reported"
    text = f"{_count(input_tokens)} input / {_count(output_tokens)} output tokens"
    return f"{text} ({cached} cached)" if cached else text


def _answer_cost(cost: float | None) -> str:
    from promptkit.adapters import cost_text

    return cost_text(cost, 1 if cost is None else 0)


def _count(value: int | None) -> str:
    return "?" if value is None else str(value)


def entry_line(state: EntryState, entry: SectionOverride | None) -> str:
    """One override entry as the REPL's `overrides` lists it: its state, then its author."""
    line = f'  {state.table}."{state.name}": {status_text(state)}'
    return line if entry is None else f"{line}; {author_text(entry)}"


def overrides_lines(
    prompt: Prompt[Any], stored: Iterable[object], root: Path | str, tag_in_use: str
) -> list[str]:
    """The REPL's `overrides`: of the `stored` values of the store at `root`, those of `prompt`
    (its own files and the shared entries it uses), each entry with its state and author."""
    from promptkit.overrides import SharedSectionOverride, entry_states, shared_states
    from promptkit.prompt import PromptOverride

    found = [
        value
        for value in stored
        if (
            isinstance(value, PromptOverride)
            and (value.ns, value.prompt_key) == (prompt.ns, prompt.key)
        )
        or (isinstance(value, SharedSectionOverride) and shared_states([prompt], value))
    ]
    if not found:
        return [
            f"no overrides for {prompt.ns}/{prompt.key} under {root}"
            " (`optimize global` writes the digest there)"
        ]
    heading = f"overrides for {prompt.ns}/{prompt.key} under {root}"
    lines = [f"{heading} (in use: tag {tag_in_use})"]
    for value in found:
        if isinstance(value, SharedSectionOverride):
            lines.append(f"tag {value.tag}, shared {value.section_key}: {value.location}")
            lines += [entry_line(state, value.entry) for state in shared_states([prompt], value)]
            continue
        assert isinstance(value, PromptOverride)
        lines.append(f"tag {value.tag}: {value.location}")
        for state in entry_states(prompt, value):
            entry = value.sections.get(tuple(state.name.split("/")))
            lines.append(entry_line(state, entry if state.table == "sections" else None))
    return lines
