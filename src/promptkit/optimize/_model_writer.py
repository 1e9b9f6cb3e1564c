"""`ModelDigestWriter`: a model explores the workspace through a `ProviderAdapter` and writes
the digest.

The model runs on the optimization session with the session-aware sections (workspace, digest,
planning) cloned onto it, so the run leaves no trace in the caller's session. Its prompt is
`<ns>.optimization` / `<key>-workspace-digest`, with the sections "Optimization Goal",
"Expectations", planning (GOAL_DECOMPOSE_ROUTE_SYNTHESISE), the cloned workspace and the cloned
digest section, and an output type with one field, `digest`, as the workspace digest
specification has it. A reply that does not
parse is kept as plain text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from promptkit._names import is_valid_key
from promptkit.adapters import (
    ModelSettings,
    PromptResponse,
    ProviderAdapter,
    TokenUsage,
    ToolCallRecord,
)
from promptkit.errors import (
    ArgumentValueError,
    DigestRejectedError,
    OptimizationError,
    OutputParseError,
    OutputTruncatedError,
    PromptValidationError,
)
from promptkit.hostfiles import (
    DEFAULT_MAX_FILE_BYTES,
    FileSelection,
    ListingProcess,
    WorkspaceManifest,
    begin_selection,
    describe_workspace,
    manifest_for_selection,
)
from promptkit.logging import get_logger
from promptkit.optimize._types import DigestDraft, OptimizationResponse, OptimizationTarget
from promptkit.planning import PlanningStrategy, PlanningToolsSection
from promptkit.prompt import Prompt, TextSection, ToolResult, schema_for_model
from promptkit.session import PromptRendered, Session, ToolInvoked
from promptkit.workspace import HostMount, record_counted_listing, record_listing

_log = get_logger("promptkit.optimize")

OPTIMIZATION_NS_SUFFIX = ".optimization"
OPTIMIZATION_KEY_SUFFIX = "-workspace-digest"

_KEY_LIMIT = 64
_HASH_CHARS = 8


DEFAULT_REPLY_TOKENS = 4096
"""The most a model's reply may be while it writes a digest: twice the digest's own budget, so
a digest that runs on is cut off rather than generated for many minutes."""


class ModelDigestWriter:
    """Writes the digest with `adapter`'s model (what `ProviderAdapter.optimize` uses)."""

    def __init__(
        self,
        adapter: ProviderAdapter,
        *,
        listing: ListingProcess | None = None,
        reply_tokens: int = DEFAULT_REPLY_TOKENS,
    ) -> None:
        """`listing` is a listing of the workspace already under way in a helper process (the
        CLI starts one before its imports); it is used when it lists the first mount's directory
        with the mount's size cap, and otherwise the mount is listed here. `reply_tokens` caps
        each reply of the model (a lower cap in the adapter's own settings is kept)."""
        if isinstance(reply_tokens, bool) or not isinstance(reply_tokens, int) or reply_tokens < 1:
            raise ArgumentValueError(
                f"ModelDigestWriter: reply_tokens must be an int >= 1, got {reply_tokens!r}"
            )
        self.adapter = adapter
        self.listing = listing
        self.reply_tokens = reply_tokens

    @property
    def provider(self) -> str:
        return self.adapter.provider

    @property
    def model(self) -> str:
        return self.adapter.model

    def __repr__(self) -> str:
        return f"ModelDigestWriter({self.adapter!r})"

    def write_digest(
        self,
        target: OptimizationTarget,
        *,
        optimization_session: Session,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
    ) -> DigestDraft:
        """The model explores the workspace through the optimization prompt and writes the
        digest."""
        # The workspace is listed once, for the manifest and for the workspace section alike,
        # and the SDK client and the prompt are built while it is listed in other processes
        # (git's, and the helper's when there is one): those are most of what comes before the
        # first request.
        primary = target.mounts[0]
        record_listing_in = self._start_listing(primary)
        inner = optimization_prompt(target, optimization_session)
        self.adapter.prepare_client()
        provenance = record_listing_in(optimization_session)
        response = _evaluate(
            self.adapter,
            inner,
            target,
            optimization_session,
            deadline,
            max_tool_rounds,
            self._reply_cap(),
        )
        return DigestDraft(
            response=response,
            provenance=provenance(),
            prompt_text=_text_given(inner, optimization_session),
        )

    def _reply_cap(self) -> int:
        settings = getattr(self.adapter, "settings", None)
        own = settings.max_output_tokens if isinstance(settings, ModelSettings) else None
        return min(self.reply_tokens, own) if own is not None else self.reply_tokens

    def _start_listing(
        self, mount: HostMount
    ) -> Callable[[Session], Callable[[], WorkspaceManifest]]:
        """Start listing `mount` (the helper's listing when it lists that directory with that
        size cap, else git's here). Returns what records the listing in a session once it is
        taken; that returns what gives the manifest, which the run needs only at its end."""
        early = self.listing
        if early is not None and early.lists(mount.root(), mount.max_file_bytes):
            early.narrow(mount.include_glob, mount.exclude_glob)
            return partial(_record_helper_listing, early, mount)
        if early is not None:
            early.close()  # a listing of another directory would only take CPU from this one
        pending = begin_selection(mount.root(), max_file_bytes=mount.max_file_bytes)
        return lambda session: _record_selection(session, mount, pending.result(), None)


def _record_helper_listing(
    listing: ListingProcess, mount: HostMount, session: Session
) -> Callable[[], WorkspaceManifest]:
    """Record the helper's listing of `mount` from its counts: the first request describes the
    workspace by them, and the files are decoded when a tool first needs one, while the model
    thinks (see `ListingProcess.summary`). The manifest the helper took as it listed is
    collected at the end (taken then, should the helper have failed after its summary)."""
    summary = listing.summary()
    if summary is None or summary.max_file_bytes != DEFAULT_MAX_FILE_BYTES:
        # Listed here, or by the helper with another size cap than a manifest describes.
        selection, fingerprint = listing.result()
        return _record_selection(session, mount, selection, fingerprint)
    record_counted_listing(session, mount, summary, lambda: listing.result()[0])

    def provenance() -> WorkspaceManifest:
        manifest = listing.manifest()
        return manifest if manifest is not None else describe_workspace(summary.root)

    return provenance


def _record_selection(
    session: Session, mount: HostMount, selection: FileSelection, fingerprint: str | None
) -> Callable[[], WorkspaceManifest]:
    """Record `selection` as the listing of `mount`, and take the manifest now."""
    record_listing(session, mount, selection)
    # Taken before the model reads anything, as the helper's is: edits made while it works make
    # the stored digest stale rather than silently describing a state it never saw. It
    # describes every file under the default size cap, as a later freshness check does.
    manifest = (
        manifest_for_selection(selection, fingerprint=fingerprint)
        if selection.max_file_bytes == DEFAULT_MAX_FILE_BYTES
        else describe_workspace(selection.root)
    )
    return lambda: manifest


def optimization_prompt(target: OptimizationTarget, session: Session) -> Prompt[Any]:
    """The prompt a model answers with the digest, bound to `session` (see the module doc)."""
    prompt = target.prompt
    planning = prompt.find_section(PlanningToolsSection)
    strategy = PlanningStrategy.GOAL_DECOMPOSE_ROUTE_SYNTHESISE
    planning_section = (
        planning.clone(session=session, strategy=strategy)
        if isinstance(planning, PlanningToolsSection)
        else PlanningToolsSection(session=session, strategy=strategy)
    )
    ns_head, _, ns_last = prompt.ns.rpartition("/")
    ns_tail = _suffixed(ns_last, OPTIMIZATION_NS_SUFFIX)
    try:
        return Prompt(
            ns=f"{ns_head}/{ns_tail}" if ns_head else ns_tail,
            key=_suffixed(prompt.key, OPTIMIZATION_KEY_SUFFIX),
            sections=(
                TextSection(
                    title="Optimization Goal",
                    key="optimization-goal",
                    text=_GOAL,
                ),
                TextSection(title="Expectations", key="expectations", text=_EXPECTATIONS),
                planning_section,
                # Children are dropped: the optimization prompt has its own fixed layout, and a
                # child bound to the caller's session would leak the run into it. The mounts are
                # the target's: narrowed by the run's globs, without promptkit's own folders.
                target.workspace_section.clone(session=session, children=(), mounts=target.mounts),
                # Writing the digest is this prompt's job, so its placeholder is expected there.
                target.digest_section.clone(
                    session=session,
                    children=(),
                    placeholder=_NO_DIGEST_YET,
                    warn_when_missing=False,
                ),
            ),
            output_type=OptimizationResponse,
        )
    except PromptValidationError as error:
        raise OptimizationError(
            f"optimize {prompt.ns}/{prompt.key}: cannot build the optimization prompt: {error};"
            " no request was sent"
        ) from error


def _suffixed(name: str, suffix: str) -> str:
    """`name + suffix`, shortened to the key rule's 64 characters with a hash of `name` kept,
    so two long names never share one optimization prompt."""
    joined = name + suffix
    if len(joined) <= _KEY_LIMIT:
        return joined
    fingerprint = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    head = name[: _KEY_LIMIT - len(suffix) - _HASH_CHARS - 1]
    shortened = f"{head}-{fingerprint}{suffix}"
    assert is_valid_key(shortened)
    return shortened


# What the model reads: written for it, in plain words, with no name only promptkit knows.
_GOAL = """\
Write a digest of the workspace mounted below: a short description that later tasks in this
workspace read instead of exploring the files again, whatever the task is.

Explore the workspace with the tools first: list its top folder, then read its README and its
build and CI files. Confirm each fact in the files, and write only what they show."""

_NO_DIGEST_YET = "No digest is stored yet: the one you write will be the first."

_EXPECTATIONS = """\
The digest is markdown of at most about 400 words, in three parts:

- Layout: the notable folders and files, by their paths in the workspace (`src/`,
  `pyproject.toml`).
- Tooling: the commands that test, lint, format, type-check and build the project, exactly as
  its files give them (`make test`).
- Watch-outs: caveats and recurring pitfalls that affect most tasks.

Leave out:

- anything about one particular task or change: the digest serves every task;
- credentials, tokens, keys and what credential files hold (name a variable a command needs,
  never its value);
- the state of outside services, and files you wrote in the workspace copy;
- anything the files do not show.

Reply with the digest itself as the value of `digest`: markdown describing this workspace, not
these instructions and not a JSON schema."""


def _text_given(prompt: Prompt[Any], session: Session) -> str:
    """What the model was given: the prompt as it rendered it, and its tools' descriptions and
    parameters (a digest that repeats them is refused as an echo)."""
    rendered = [
        event.text
        for event in session.select_all(PromptRendered)
        if (event.prompt_ns, event.prompt_key) == (prompt.ns, prompt.key)
    ]
    tools = [tool for _, section in prompt.iter_sections() for tool in section.tools]
    return "\n\n".join(
        [
            *rendered[-1:],
            *(tool.description for tool in tools),
            *(json.dumps(schema_for_model(tool.parameters_schema)) for tool in tools),
        ]
    )


def _evaluate(
    adapter: ProviderAdapter,
    inner: Prompt[Any],
    target: OptimizationTarget,
    session: Session,
    deadline: float | timedelta | None,
    max_tool_rounds: int,
    reply_tokens: int,
) -> PromptResponse[Any]:
    """Evaluate the optimization prompt; a reply that does not parse is kept as plain text, and
    one cut off at the cap is refused."""
    calls_before = len(session.select_all(ToolInvoked))
    try:
        return adapter.evaluate(
            inner,
            session=session,
            overrides_store=target.overrides_store,
            overrides_tag=target.overrides_tag or "latest",
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
            settings=ModelSettings(max_output_tokens=reply_tokens),
            # A reply that does not parse is kept as the digest text, so asking again would
            # only cost another request.
            output_retries=0,
        )
    except OutputTruncatedError as error:
        usage = error.response.usage if isinstance(error.response, PromptResponse) else None
        written = f" after {usage.output_tokens} tokens" if usage and usage.output_tokens else ""
        raise DigestRejectedError(
            f"optimize {target.prompt.ns}/{target.prompt.key}: the model's reply was cut"
            f" off{written}, so it holds no complete digest (this run caps each reply at"
            f" {reply_tokens} tokens; a digest is at most about 2000); nothing was stored. Try"
            " another model, or the static optimizer (--provider static, or --fallback-static)",
            response=error.response,
        ) from None
    except OutputParseError as error:
        _log.info(
            "optimization_reply_unstructured",
            prompt_ns=inner.ns,
            prompt_key=inner.key,
            reason=str(error)[:300],
        )
        if isinstance(error.response, PromptResponse):
            # What the adapter had when parsing failed: the reply's text, tool calls and usage.
            return error.response
        # An adapter that attaches no response: the session still has the tool calls.
        calls = [
            call
            for call in session.select_all(ToolInvoked)[calls_before:]
            if (call.prompt_ns, call.prompt_key) == (inner.ns, inner.key)
        ]
        return PromptResponse(
            prompt_name=inner.display_name,
            text=error.raw_text,
            output=None,
            tool_calls=tuple(_call_record(call) for call in calls),
            usage=TokenUsage(),
            model=adapter.model,
            provider=adapter.provider,
        )


def _call_record(call: ToolInvoked) -> ToolCallRecord:
    return ToolCallRecord(
        name=call.name,
        call_id=call.call_id,
        params=dict(call.params),
        result=ToolResult(message=call.result_message, value=call.value, success=call.success),
        duration=timedelta(seconds=call.duration_s),
    )
