"""`promptkit overrides check`: the CI gate over an overrides folder, and how the `overrides`
commands find the prompts to compare entries with (`--prompt`, entry points, and the
`[tool.promptkit] prompts` of the project's pyproject.toml)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from promptkit.config import ProjectConfig
    from promptkit.overrides import DocumentOverridesStore
    from promptkit.prompt import Prompt


# One check report: each note it can carry (syntax only, no prompt, evidence) is a path.
def run_check(args: argparse.Namespace) -> int:
    """`overrides check`: every file, credential, entry and promotion's evidence; exit status 1
    on any problem (evidence problems only with `--evidence error`)."""
    from promptkit.overrides import check_overrides

    store = strict_store(args)
    documents = store.read_documents()
    prompts = {} if args.syntax_only else known_prompts(args.prompt, args.config)
    notes: list[str] = []
    notes.extend(_hand_edit_notes(store, fix=args.fix))
    if documents and not prompts and not args.syntax_only:
        notes.append(
            "nothing to check the entries against: no --prompt, no promptkit.prompts entry"
            " points and no [tool.promptkit] prompts in pyproject.toml; name the prompts, or"
            " pass --syntax-only to check the files alone"
        )
    found = check_overrides(store, prompts.values(), syntax_only=args.syntax_only)
    # With `--evidence warn`, a text edited since its promotion is said but does not fail CI.
    warned = args.evidence == "warn"
    warnings = [problem for problem in found if warned and problem.kind == "evidence"]
    problems = [problem for problem in found if problem not in warnings]
    summary = (
        f"overrides check: {len(problems)} problem(s) in {len(documents)} file(s) under"
        f" {store.location}"
    )
    if warnings:
        summary += f", {len(warnings)} warning(s)"
    if args.json:
        document = {
            "overrides_dir": str(args.root),
            "files": len(documents),
            "prompts": sorted(f"{ns}/{key}" for ns, key in prompts),
            "syntax_only": args.syntax_only,
            "problems": [problem.to_json() for problem in problems],
            "warnings": [problem.to_json() for problem in warnings],
            "notes": notes,
            "ok": not problems,
        }
        print(json.dumps(document, indent=2))
    else:
        for problem in problems:
            print(problem)
        for problem in warnings:
            print(f"warning: {problem}")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        print(summary)
    return 1 if problems else 0


def _hand_edit_notes(store: DocumentOverridesStore[Any], *, fix: bool) -> list[str]:
    """A note per document not in the form promptkit writes; with `fix`, each is rewritten so."""
    edited = store.record_all_hand_edits(dry_run=not fix)
    if fix:
        return [
            f"{where}: recorded in promptkit's form (hand edits: source = operator)"
            for where in edited
        ]
    return [
        f"{where}: not in the form promptkit writes (edited by hand, or written by an older"
        " promptkit); the next write, or `promptkit overrides check --fix`, records hand-edited"
        " bodies as the operator's, dated"
        for where in edited
    ]


def strict_store(args: argparse.Namespace) -> DocumentOverridesStore[Any]:
    """The store of `--overrides-dir` (a folder or a database URL), read strictly: a document a
    render would skip is an error."""
    from promptkit.discovery import overrides_store_of

    return overrides_store_of(args.config, strict=True)


def known_prompts(
    references: list[str], config: ProjectConfig
) -> dict[tuple[str, str], Prompt[Any]]:
    """The prompts of `--prompt`, the entry points and the project configuration's
    `[tool.promptkit] prompts`, by (ns, key)."""
    from promptkit.discovery import entry_point_prompts, find_prompt, project_prompts

    prompts: dict[tuple[str, str], Prompt[Any]] = {}
    found = entry_point_prompts()
    for failure in found.failures:
        print(f"promptkit: warning: {failure}", file=sys.stderr)
    for _, prompt in found.prompts:
        prompts[(prompt.ns, prompt.key)] = prompt
    for reference in (*project_prompts(config), *references):
        prompt = find_prompt(reference)
        prompts[(prompt.ns, prompt.key)] = prompt
    return prompts
