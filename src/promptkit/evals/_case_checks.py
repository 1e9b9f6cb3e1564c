"""What a case's evaluation must show besides its score: that the application's tools did not
fail unexpectedly, and that the prompt had a workspace digest; and its tool calls as a report
shows them.

A tool error the case does not expect (`Case.expected_tool_errors`) fails the case: a reply
scored after a tool failed for want of deps, say, says nothing about the text under test. A
prompt that would render the placeholder workspace digest (no digest in its session, in the
tag's overrides, nor the project's shared one; see docs/workspace-digest.md) fails every case
of that tag before anything is sent, unless the run allows it: a comparison of a prompt
without a digest with one that has it compares the digests, not the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from promptkit._jsonable import json_ready
from promptkit.digest import WorkspaceDigestSection, resolve_workspace_digest
from promptkit.evals._dataset import Case
from promptkit.evals._report import TOOL_RESULT_SHOWN, CaseToolCall
from promptkit.overrides import SharedSectionStore
from promptkit.prompt import OverridesLookup, Prompt
from promptkit.secrets import redact_secrets, redact_value

if TYPE_CHECKING:
    from promptkit.adapters import PromptResponse


def case_tool_calls(response: PromptResponse[Any]) -> tuple[CaseToolCall, ...]:
    """The tool calls of `response` as a report keeps them: redacted, results bounded."""
    return tuple(
        CaseToolCall(
            name=call.name,
            arguments=redact_value(json_ready(call.params)),
            success=call.success,
            # Redacted whole, then cut: a credential cut in two is no longer recognised.
            result=_bounded(redact_secrets(call.result.message)),
        )
        for call in response.tool_calls
    )


def unexpected_tool_error(case: Case, calls: tuple[CaseToolCall, ...]) -> str | None:
    """Why the case fails for a tool error it does not expect, or None."""
    failed = [call for call in calls if not call.success]
    unexpected = [call for call in failed if call.name not in case.expected_tool_errors]
    if not unexpected:
        return None
    first = unexpected[0]
    more = f" (and {len(unexpected) - 1} more failed call(s))" if len(unexpected) > 1 else ""
    return (
        f"tool {first.name!r} returned an error: {first.result}{more} (a case that expects it"
        f" lists {first.name!r} in expected_tool_errors)"
    )


def placeholder_message(
    prompt: Prompt[Any, Any], overrides: OverridesLookup | None, tag: str
) -> str | None:
    """Why the cases of `tag` fail for rendering the placeholder digest, or None when the
    prompt has a digest there (or no digest section, or one that expects the placeholder)."""
    section = prompt.find_section(WorkspaceDigestSection)
    if not isinstance(section, WorkspaceDigestSection) or not section.warn_when_missing:
        return None
    resolution = resolve_workspace_digest(prompt, overrides_store=overrides, tag=tag)
    if resolution.origin != "placeholder":
        return None
    project_tag = overrides.default_tag if isinstance(overrides, SharedSectionStore) else tag
    tags = repr(tag) if project_tag == tag else f"{tag!r} or the project's tag {project_tag!r}"
    return (
        f"the prompt would render the placeholder workspace digest under tag {tag!r}: no digest"
        f" in its session and no override of {tags}; run `promptkit optimize --scope global`"
        " first, or allow it (--allow-placeholder-digest, allow_placeholder_digest=True)"
    )


def _bounded(text: str) -> str:
    return text if len(text) <= TOOL_RESULT_SHOWN else f"{text[:TOOL_RESULT_SHOWN]}..."
