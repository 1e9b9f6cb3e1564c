"""A code-review assistant REPL over a repository, built on promptkit.

Run: python examples/code_reviewer_example.py PATH [--provider auto|openai|anthropic|static]
     [--model M] [--base-url URL] [--tag T] [--overrides-dir DIR] [--state-dir DIR]

The prompt (`build_review_prompt`) is a role, the repository as an in-memory filesystem with
file tools, planning tools, the workspace digest and the review request, answered as a
structured `ReviewResponse`. The loop is promptkit's workspace REPL (`optimize`, `digest`,
`overrides`, `history`, `help`, `quit`) plus `review <request>`, which prints the review as a
list of issues. Without an API key everything but `review` works offline: `optimize` then uses
the static optimizer, which writes the digest from the files themselves.

The factory is importable, so the promptkit commands use the same prompt, for example from the
repository root:

    promptkit render --prompt examples.code_reviewer_example:build_review_prompt
    promptkit repl --prompt examples.code_reviewer_example:build_review_prompt
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from promptkit import (
    HostMount,
    MarkdownSection,
    PlanningToolsSection,
    Prompt,
    PromptkitError,
    PromptResponse,
    Session,
    TextSection,
    VfsWorkspaceSection,
    WorkspaceDigestSection,
)
from promptkit.cli import add_repl_arguments, run_repl
from promptkit.logging import configure
from promptkit.repl import WorkspaceRepl, usage_line

Severity = Literal["critical", "major", "minor"]


@dataclass(frozen=True)
class ReviewIssue:
    """One problem found: where it is, how much it matters, and what is wrong."""

    file: str
    line: int | None
    severity: Severity
    description: str


@dataclass(frozen=True)
class ReviewResponse:
    """The review: a summary, the issues (most severe first) and the next steps."""

    summary: str
    issues: tuple[ReviewIssue, ...]
    next_steps: tuple[str, ...]


@dataclass(frozen=True)
class ReviewRequest:
    """What to review; the default asks for a review of the whole repository."""

    request: str = "Review the repository as a whole and report the problems that matter most."


ROLE = """\
You are a senior code reviewer for the repository mounted below. You look for the problems that
matter: wrong behaviour, unhandled errors, security risks, missing or misleading tests, and
changes that break documented interfaces. Read the workspace digest first, then confirm every
finding in the files themselves before you report it. Leave out style points a formatter or
linter would fix, and say so when you could not confirm something instead of guessing."""

REQUEST_TEMPLATE = """\
{{ request }}

Report each problem once, most severe first: the file (its path from the workspace root), the
line it starts on (null when it concerns the whole file), its severity (critical, major or
minor) and what is wrong and why. Then list at most five next steps, in the order you would
take them."""


def build_review_prompt(
    session: Session | None = None, workspace: Path | None = None
) -> Prompt[ReviewResponse]:
    """The code-review prompt over `workspace`, bound to `session`.

    Called without arguments (as `promptkit overrides` does) it uses a new session and the
    current directory.
    """
    session = session if session is not None else Session()
    root = workspace if workspace is not None else Path.cwd()
    return Prompt(
        ns="examples",
        key="code-review",
        name="Code review assistant",
        sections=(
            TextSection(title="Role", key="role", text=ROLE),
            VfsWorkspaceSection(session=session, mounts=[HostMount(root)]),
            PlanningToolsSection(session=session),
            WorkspaceDigestSection(session=session),
            MarkdownSection(
                title="Review Request",
                key="review-request",
                params_type=ReviewRequest,
                template=REQUEST_TEMPLATE,
            ),
        ),
        output_type=ReviewResponse,
    )


class CodeReviewRepl(WorkspaceRepl):
    """The workspace REPL with `review`, and reviews printed as a list of issues."""

    def do_review(self, arg: str) -> None:
        """review REQUEST: review the repository as asked; print the issues and next steps."""
        request = arg.strip()
        if not request:
            self.fail("review needs a request, for example: review the error handling of the CLI")
            return
        response = self.evaluate(ReviewRequest(request=request), command="review")
        self.say(self.format_response(response))

    def format_response(self, response: PromptResponse[Any]) -> str:
        review = response.output
        if not isinstance(review, ReviewResponse):
            return super().format_response(response)
        lines = [f"summary: {review.summary}", ""]
        if review.issues:
            lines.append(f"issues ({len(review.issues)}):")
            for number, issue in enumerate(review.issues, start=1):
                where = issue.file if issue.line is None else f"{issue.file}:{issue.line}"
                lines.append(f"  {number}. [{issue.severity}] {where}: {issue.description}")
        else:
            lines.append("issues: none found")
        if review.next_steps:
            lines += ["", "next steps:"]
            lines += [f"  {n}. {step}" for n, step in enumerate(review.next_steps, start=1)]
        lines += ["", f"({usage_line(response)})"]
        return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="code_reviewer_example.py",
        description="A code-review assistant over a repository: optimize [session|global [force]],"
        " review REQUEST, digest, overrides, history, help, quit.",
    )
    add_repl_arguments(parser, prompt_option=False)
    args = parser.parse_args(argv)
    configure(level="warning")
    try:
        return run_repl(args, repl_type=CodeReviewRepl, prompt_source=build_review_prompt)
    except PromptkitError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
