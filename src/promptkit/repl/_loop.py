"""The workspace REPL: one prompt with a workspace digest, and the commands around it.

`WorkspaceRepl` is a stdlib `cmd.Cmd` over a prompt that has a `WorkspaceDigestSection`:
`optimize [session|global [force]]` writes and stores the digest (GLOBAL asks before it
replaces a digest an operator wrote), `ask [--params JSON|@FILE] <message>` evaluates the prompt
(with its params, as `promptkit render --params` takes them),
`digest` says which digest a render would use and how current it is, `overrides` lists the
stored overrides for the prompt, `history` lists the executed prompts and tool calls of the
session with token usage. `promptkit repl` runs it for any such prompt; the code-review example
subclasses it with its own `review` command and output formatting. What it shows is worded in
`promptkit.repl._report` and `promptkit.repl._progress`.

The session is the one most recently stored for the workspace (as for `promptkit optimize` and
`render`), held for the whole loop so a digest stored here is what a later `render` sees; a new
session is stored only once a command has put something in it. Piped input works: without a
terminal there is no prompt string and no banner, so stdout holds only what the commands print.
A command's promptkit error, or an environment failure such as a full disk (see
`promptkit._failures`), is one line on stderr and the loop goes on; the exit status is 1
when any command failed, so a script can tell.
"""

from __future__ import annotations

import cmd
import inspect
import json
import shlex
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from promptkit._failures import describe_failure
from promptkit._jsonable import json_ready
from promptkit.digest import DigestResolution, WorkspaceDigestSection, resolve_workspace_digest
from promptkit.discovery import PromptSource, bind_prompt
from promptkit.errors import PromptkitError, PromptValidationError, ProviderError
from promptkit.hostfiles import describe_workspace
from promptkit.overrides import DocumentOverridesStore
from promptkit.prompt import (
    Prompt,
    params_from_json,
    read_params_argument,
)
from promptkit.repl._progress import Progress
from promptkit.repl._report import history_lines, overrides_lines, resolution_lines, usage_line
from promptkit.session import (
    PromptExecuted,
    Session,
    ToolInvoked,
)
from promptkit.workspace import forget_listings

if TYPE_CHECKING:
    from promptkit.adapters import CallOptions, PromptResponse
    from promptkit.app import App
    from promptkit.optimize import OptimizationScope, WriterChoice
    from promptkit.session import SessionAttachmentProtocol, SessionStoreProtocol

# The provider adapters, the optimizer and the secret rules are imported by the commands that use
# them: a program that only imports this module to subclass the REPL (the code-review example,
# which `promptkit overrides list` imports for its prompt) loads none of them.

OnText = Callable[[str], None] | None


@dataclass(frozen=True)
class ReplSetup:
    """What a REPL works on: the workspace, the prompt (or its factory), the chosen digest
    writer (with its adapter, when there is a model), the overrides store and tag, the session
    store, and the application's binding (`app`), whose deps, settings and prices `ask` passes
    on as the application's own calls do. `optimize_deadline` (None: the optimizer's default),
    `fallback_static` and `gate` are `optimize_workspace_digest`'s options for `optimize`."""

    workspace: Path
    prompt_source: PromptSource
    choice: WriterChoice
    overrides: DocumentOverridesStore[Any]
    tag: str
    state: SessionStoreProtocol
    app: App[Any] | None = None
    optimize_deadline: float | None = None
    fallback_static: bool = False
    gate: bool = True


class WorkspaceRepl(cmd.Cmd):
    """The loop; see the module doc. Build it with `open`, run it with `run`, close it (or use
    it as a context manager) to release the session. Subclasses add `do_<name>` commands and
    may override `format_response`."""

    # Commands accepted but not listed by `help`.
    hidden_commands: frozenset[str] = frozenset({"EOF", "exit"})

    def __init__(
        self,
        setup: ReplSetup,
        session: Session,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        """Use `open`: it loads the session and binds the prompt."""
        input_stream = stdin if stdin is not None else sys.stdin
        self.output: TextIO = stdout if stdout is not None else sys.stdout
        super().__init__(stdin=input_stream, stdout=self.output)
        self.setup = setup
        self.session = session
        self.stderr = stderr if stderr is not None else sys.stderr
        # input() gives line editing and history, but it reads sys.stdin only.
        self.is_interactive = input_stream is sys.stdin and input_stream.isatty()
        self.use_rawinput = self.is_interactive
        self.prompt = "promptkit> " if self.is_interactive else ""
        self.failures = 0
        self._attachment: SessionAttachmentProtocol | None = None
        self._prompt = self._bound_prompt()
        self._copied_fingerprint = _fingerprint(setup.workspace)

    @classmethod
    def open(
        cls,
        setup: ReplSetup,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> Self:
        """Load the workspace's latest stored session (or start one) and bind the prompt.

        A stored session is attached at once, so a session another process is recording fails
        here (SessionError) rather than after work was done. PromptValidationError when the
        prompt has no `WorkspaceDigestSection`.
        """
        stored = setup.state.latest(setup.workspace)
        session = stored if stored is not None else Session()
        repl = cls(setup, session, stdin=stdin, stdout=stdout, stderr=stderr)
        # Attached after binding: the workspace copy the prompt puts in the session is not
        # persisted, and recording it would only log that.
        if stored is not None:
            repl._keep_session()
        return repl

    # -- running ----------------------------------------------------------------------------

    def run(self) -> int:
        """Read and run commands until `quit` or end of input; 1 when any command failed."""
        intro = self.banner() if self.is_interactive else None
        while True:
            try:
                self.cmdloop(intro)
            except KeyboardInterrupt:
                # Ctrl-C at the prompt drops the line being typed; it does not end the loop.
                self.say("")
                intro = None
                continue
            break
        return 1 if self.failures else 0

    def close(self) -> None:
        """Stop recording the session (its files stay for the next REPL or `render`)."""
        if self._attachment is not None:
            self._attachment.close()
            self._attachment = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def banner(self) -> str:
        """What an interactive loop shows first: the prompt, the workspace, the provider."""
        prompt = self._prompt
        return (
            f"{prompt.display_name} ({prompt.ns}/{prompt.key}) over {self.setup.workspace}\n"
            f"provider: {self.setup.choice.reason}\n"
            f"overrides: {self.setup.overrides.location}, tag {self.setup.tag}\n"
            "type `help` for the commands, `quit` or Ctrl-D to leave"
        )

    def onecmd(self, line: str) -> bool:
        stripped = line.strip()
        # Comment lines let a piped script explain itself.
        if stripped.startswith("#"):
            return False
        try:
            return super().onecmd(stripped)
        except (PromptkitError, OSError, UnicodeError, RuntimeError) as error:
            # A full disk or an unwritable folder fails this command, not the whole loop.
            failure = describe_failure(error)
            if failure is None:
                raise
            self.fail(failure.message)
        except KeyboardInterrupt:
            self.fail("interrupted; nothing more was done for this command")
        return False

    def emptyline(self) -> bool:
        # cmd repeats the last command on an empty line; re-running an optimize or a paid
        # evaluation by pressing Enter would be a surprise.
        return False

    def default(self, line: str) -> None:
        name = line.split(maxsplit=1)[0] if line.split() else line
        self.failures += 1
        self.say(f"unknown command {name!r}")
        self.say(self.command_table())

    def say(self, text: str) -> None:
        """Write `text` and a newline to the REPL's output."""
        self.stdout.write(f"{text}\n")
        self.stdout.flush()

    def fail(self, message: str) -> None:
        """Report a failed command as one line on stderr; the loop goes on."""
        from promptkit.secrets import redact_secrets

        self.failures += 1
        one_line = " ".join(part.strip() for part in message.splitlines() if part.strip())
        self.stderr.write(f"error: {redact_secrets(one_line)}\n")
        self.stderr.flush()

    # -- help -------------------------------------------------------------------------------

    def do_help(self, arg: str) -> None:
        """help [COMMAND]: list the commands, or show what one does."""
        name = arg.strip()
        if not name:
            self.say(self.command_table())
            return
        handler = getattr(self, f"do_{name}", None)
        if handler is None or name in self.hidden_commands:
            self.failures += 1
            self.say(f"no command {name!r}")
            self.say(self.command_table())
            return
        self.say(inspect.cleandoc(handler.__doc__ or name))

    def command_table(self) -> str:
        """One line per command: its usage and what it does."""
        rows = []
        for name in self.command_names():
            doc = (getattr(self, f"do_{name}").__doc__ or name).strip()
            usage, _, summary = doc.splitlines()[0].partition(": ")
            rows.append((usage, summary))
        width = max(len(usage) for usage, _ in rows)
        lines = ["commands:"]
        lines += [f"  {usage.ljust(width)}  {summary}".rstrip() for usage, summary in rows]
        return "\n".join(lines)

    def command_names(self) -> list[str]:
        """The listed commands, in the order `help` shows them (`help` and `quit` last)."""
        names = sorted(
            name[3:]
            for name in self.get_names()
            if name.startswith("do_") and name[3:] not in self.hidden_commands
        )
        last = [name for name in ("help", "quit") if name in names]
        return [name for name in names if name not in last] + last

    # -- leaving ----------------------------------------------------------------------------

    def do_quit(self, arg: str) -> bool:
        """quit: leave (Ctrl-D and the end of piped input do the same)."""
        return True

    def do_exit(self, arg: str) -> bool:
        """exit: leave, like quit."""
        return True

    def do_EOF(self, arg: str) -> bool:  # noqa: N802 (cmd dispatches end of input as "EOF")
        """End of input: leave."""
        if self.is_interactive:
            self.say("")
        return True

    # -- optimize ---------------------------------------------------------------------------

    def do_optimize(self, arg: str) -> None:
        """optimize [session|global [force]]: write the workspace digest and store it.

        session (the default) keeps the digest in this workspace's session, where `render` and
        the next REPL find it. global writes it into the overrides folder under the tag (as the
        shared digest any prompt with the same digest section finds) and clears the session's
        digest so the override is used. A digest an operator wrote is replaced only when you
        answer yes to the question, or with `optimize global force`.
        """
        words = arg.split()
        if words not in ([], ["session"], ["global"], ["global", "force"]):
            self.fail(f"optimize takes session, global or global force, got {arg.strip()!r}")
            return
        from promptkit.optimize import OperatorOverrideError, OptimizationScope

        scope = OptimizationScope(words[0] if words else "session")
        try:
            self._optimize(scope, overwrite_operator=words[1:] == ["force"])
        except OperatorOverrideError as refused:
            question = f"{refused.location} holds a digest an operator wrote; replace it? [y/N] "
            if not self.confirm(question):
                self.fail(f"{refused}")
                return
            self._optimize(scope, overwrite_operator=True)

    def confirm(self, question: str) -> bool:
        """Ask a yes/no question on the REPL's streams; only `y` or `yes` is a yes."""
        self.stdout.write(question)
        self.stdout.flush()
        answer = self.stdin.readline()
        if not self.is_interactive:  # shown, so a piped transcript reads like a session
            self.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        return answer.strip().lower() in ("y", "yes")

    def _optimize(self, scope: OptimizationScope, *, overwrite_operator: bool) -> None:
        from promptkit.optimize import (
            DEFAULT_OPTIMIZE_DEADLINE,
            OptimizationScope,
            optimize_workspace_digest,
        )

        writer = self.setup.choice.writer
        deadline = self.setup.optimize_deadline
        progress = Progress(self.output, live=self.is_interactive)
        progress.say(
            f"optimizing the workspace digest ({scope} scope) with {_writer_label(self.setup)}"
        )
        run_session = Session()
        stop_progress = run_session.subscribe(progress.on_event)
        stop_forwarding = run_session.subscribe(self._record_in_history)
        waits_for_a_model = self.setup.choice.adapter is not None
        try:
            with progress.ticking() if waits_for_a_model else nullcontext():
                result = optimize_workspace_digest(
                    writer,
                    self._prompt,
                    store_scope=scope,
                    overrides_store=self.setup.overrides,
                    overrides_tag=self.setup.tag,
                    session=self.session,
                    optimization_session=run_session,
                    overwrite_operator=overwrite_operator,
                    deadline=DEFAULT_OPTIMIZE_DEADLINE if deadline is None else deadline,
                    gate=self.setup.gate,
                    fallback_static=self.setup.fallback_static,
                )
        finally:
            stop_forwarding()
            stop_progress()
            progress.end_status()
            self._keep_session()
        progress.done(len(result.response.tool_calls), result.response.usage)
        self.say(f"stored the {result.section_key!r} digest ({len(result.digest)} characters) in:")
        if scope is OptimizationScope.SESSION:
            folder = self.setup.state.location(self.setup.workspace, self.session.session_id)
            self.say(f"  session {self.session.session_id} ({folder})")
        for location in result.locations:
            self.say(f"  {location}")
        if result.grounding is not None:
            self.say(f"grounding: {result.grounding.summary()}")
        self.say("`digest` shows it")

    def _record_in_history(self, event: object) -> None:
        # The optimization runs on a session of its own; its tool calls and answer are copied
        # here so `history` shows what was spent, while its workspace copy and plan are not.
        if isinstance(event, ToolInvoked | PromptExecuted):
            self.session.dispatch(event)

    # -- evaluating -------------------------------------------------------------------------

    def do_ask(self, arg: str) -> None:
        """ask [--params JSON|@FILE] MESSAGE: evaluate the prompt (with those params) with
        MESSAGE as the user's turn; print the answer."""
        message = arg.strip()
        params: tuple[Any, ...] = ()
        if message.startswith("--params"):
            try:
                words = shlex.split(message)
            except ValueError as error:  # an unclosed quote
                self.fail(f"ask: cannot split the line into words ({error}); close the quote")
                return
            if len(words) < 2:
                self.fail("ask --params needs JSON or @FILE, for example: ask --params @req.json")
                return
            document = read_params_argument(words[1])
            params = params_from_json(
                self._prompt.params_types, document, prompt_name=self._prompt.display_name
            )
            message = " ".join(words[2:])
        if not message:
            self.fail("ask needs a message, for example: ask where are the tests?")
            return
        live = self._prompt.output_type is None  # a text answer is printed as it arrives
        on_text = self._write_live if live else None
        response = self.evaluate(*params, command="ask", user_message=message, on_text=on_text)
        self.say(f"\n\n({usage_line(response)})" if live else self.format_response(response))

    def _write_live(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def evaluate(
        self, *params: Any, command: str, user_message: str | None = None, on_text: OnText = None
    ) -> PromptResponse[Any]:
        """Evaluate the prompt with `params`, recording it in the session; ProviderError saying
        how to configure a model when the REPL has none. `command` names the REPL command.
        With `on_text`, the reply is streamed and each piece of its text passed on as it
        arrives."""
        adapter = self.setup.choice.adapter
        if adapter is None:
            raise ProviderError(
                f"`{command}` needs a model, and this REPL has none ({self.setup.choice.reason});"
                " set OPENAI_API_KEY or ANTHROPIC_API_KEY and start again with --provider auto,"
                " or start again with --base-url URL of a local OpenAI-compatible server (vLLM,"
                " Ollama, llama.cpp); optimize, digest, overrides and history work offline"
            )
        from promptkit.adapters import WireAdapter, response_of

        self._refresh_workspace_copy()
        options: CallOptions[Any] = {
            "overrides_store": self.setup.overrides,
            "overrides_tag": self.setup.tag,
            "user_message": user_message,
        }
        if self.setup.app is not None:
            options = self.setup.app.call_options(options)
        try:
            if on_text is None or not isinstance(adapter, WireAdapter):
                return adapter.evaluate(self._prompt, *params, session=self.session, **options)
            events = adapter.stream(self._prompt, *params, session=self.session, **options)
            return response_of(events, on_text=on_text)
        finally:
            self._keep_session()

    def format_response(self, response: PromptResponse[Any]) -> str:
        """The answer as printed: the structured output as JSON (else the text), then usage."""
        if response.output is None:
            body = response.text.strip()
        else:
            body = json.dumps(json_ready(response.output), indent=2, ensure_ascii=False)
        return f"{body}\n\n({usage_line(response)})"

    def _refresh_workspace_copy(self) -> None:
        # The workspace section keeps its listing and what it read; a review after an edit must
        # see the edit (and files created since).
        fingerprint = _fingerprint(self.setup.workspace)
        if fingerprint == self._copied_fingerprint:
            return
        forget_listings(self.session)
        self._prompt = self._bound_prompt()
        self._copied_fingerprint = fingerprint

    # -- digest -----------------------------------------------------------------------------

    def do_digest(self, arg: str) -> None:
        """digest: show the digest a render would use now, its origin, age and freshness."""
        resolution = resolve_workspace_digest(
            self._prompt, overrides_store=self.setup.overrides, tag=self.setup.tag
        )
        lines = resolution_lines(resolution, origin=self._origin_text(resolution))
        self.say("\n".join([*lines, "", resolution.body]))

    def _origin_text(self, resolution: DigestResolution) -> str:
        overrides, tag, prompt = self.setup.overrides, self.setup.tag, self._prompt
        if resolution.origin == "session":
            return f"session ({self.session.session_id})"
        if resolution.origin == "override":
            return f"override ({overrides.prompt_location(prompt.ns, prompt.key, tag)})"
        if resolution.origin == "shared-override":
            shared_tag = resolution.tag or tag
            where = overrides.shared_location(resolution.section_key, shared_tag)
            if resolution.fallback_from is not None:
                return f"shared override ({where}: tag {tag} has none, the project's is used)"
            return f"shared override ({where})"
        return "placeholder (no digest yet: run `optimize session` or `optimize global`)"

    # -- overrides --------------------------------------------------------------------------

    def do_overrides(self, arg: str) -> None:
        """overrides: list the stored overrides of this prompt (every tag) and which apply."""
        store = self.setup.overrides
        lines = overrides_lines(
            self._prompt, store.list_overrides(), store.location, self.setup.tag
        )
        self.say("\n".join(lines))

    # -- history ----------------------------------------------------------------------------

    def do_history(self, arg: str) -> None:
        """history: list the session's executed prompts and tool calls, with token usage and
        cost, then the session's total."""
        executed = self.session.select_all(PromptExecuted)
        calls = self.session.select_all(ToolInvoked)
        if not executed and not calls:
            self.say("no prompts executed in this session yet")
            return
        self.say("\n".join(history_lines(executed, calls)))

    # -- session and prompt -----------------------------------------------------------------

    def _bound_prompt(self) -> Prompt[Any]:
        prompt = bind_prompt(
            self.setup.prompt_source, session=self.session, workspace=self.setup.workspace
        )
        if not isinstance(prompt.find_section(WorkspaceDigestSection), WorkspaceDigestSection):
            raise PromptValidationError(
                f"prompt {prompt.ns}/{prompt.key} has no WorkspaceDigestSection: the REPL works"
                " on a prompt's workspace digest; add WorkspaceDigestSection(session=session)"
            )
        return prompt

    def _keep_session(self) -> None:
        # A new session is stored only once a command put something in it: storing it at start
        # would make an empty session the workspace's latest, hiding an older one's digest.
        if self._attachment is None:
            self._attachment = self.setup.state.attach(self.session, self.setup.workspace)


def _writer_label(setup: ReplSetup) -> str:
    adapter = setup.choice.adapter
    if adapter is None:
        return "the static optimizer (no model)"
    return f"{adapter.provider} {adapter.model}"


def _fingerprint(workspace: Path) -> str | None:
    return describe_workspace(workspace).fingerprint
