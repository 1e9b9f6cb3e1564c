"""`promptkit overrides ...`: the operator's commands over a `LocalPromptOverridesStore`.

list, show, seed, set, edit, diff, rm and check, promote (in `promptkit.cli._promote`), and
push and pull between files and a database (in `promptkit.cli._transfer`). The store is a folder
or, when `--overrides-dir` or `[tool.promptkit] overrides` is a postgresql:// URL, a database.
Prompts are found by `--prompt package.module:attr`, through the `promptkit.prompts` entry
points, and (for `check` and `list`) in the `[tool.promptkit] prompts` list of the project's
pyproject.toml; every write goes through the store, so the CLI checks nothing the library does
not. The commands read with a strict store: a file that a render would skip is an error here.
The store's folder is `--overrides-dir`, else the project's (`[tool.promptkit] overrides`), as in
every other command;
`list`, `show` and `check` take `--json` (fields in docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.cli._options import (
    add_json_argument,
    add_overrides_folder_argument,
    add_tag_argument,
    configured,
)
from promptkit.cli._overrides_check import run_check, strict_store
from promptkit.errors import OverridesError

if TYPE_CHECKING:
    from promptkit.cli._app import CommandParser
    from promptkit.prompt import Prompt, PromptOverride

# The handlers import the library, and the standard modules only one action uses, where they
# use it: a command line that names one action imports what that action needs, and `--help`
# imports none of it.


def register(parser: CommandParser) -> None:
    """Fill in the parser of the `promptkit overrides` command group."""
    parser.description = (
        "Tune the text of prompt sections and tool descriptions without a code change. Files"
        " live under --root (default overrides/) and are reviewed like code."
    )
    actions = parser.add_subparsers(dest="overrides_action", metavar="ACTION", required=True)

    def action(name: str, help_text: str, handler: Any, *, prompt: str = "one") -> Any:
        sub = actions.add_parser(name, help=help_text, description=help_text)
        add_overrides_folder_argument(sub)
        if prompt == "one":
            sub.add_argument(
                "--prompt",
                required=True,
                help="package.module:attr, or an entry-point name or ns/key of the"
                " promptkit.prompts entry points",
            )
            add_tag_argument(sub)
        elif prompt == "many":
            sub.add_argument(
                "--prompt",
                action="append",
                default=[],
                help="a prompt to compare with (package.module:attr); repeatable; the"
                " promptkit.prompts entry points and the [tool.promptkit] prompts of"
                " pyproject.toml are always included",
            )
        sub.set_defaults(handler=configured(handler))
        return sub

    listing = action(
        "list",
        "list override files with section, tool and stale counts; exit 1 when a file is invalid",
        _list,
        prompt="many",
    )
    add_json_argument(listing)
    show = action("show", "show the entries stored for a prompt and whether each applies", _show)
    add_json_argument(show)
    show.add_argument("--path", help="only this section path (a/b)")
    action("seed", "write the current default texts as a starting point", _seed)
    set_parser = action("set", "store a section body", _set)
    set_parser.add_argument("--path", required=True, help="the section path, keys joined by /")
    source = set_parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--body", help="the new body text")
    source.add_argument("--from-file", help="read the new body from this file ('-' for stdin)")
    edit = action("edit", "edit a section body in $EDITOR, then validate and store it", _edit)
    edit.add_argument("--path", required=True, help="the section path, keys joined by /")
    diff = action("diff", "unified diff of each default text against its override", _diff)
    diff.add_argument("--path", help="only this section path (a/b)")
    remove = actions.add_parser(
        "rm",
        help="remove a prompt's overrides, one entry, or a shared section",
        description="Remove a prompt's override file, one section or tool entry of it, or a"
        " shared section file.",
    )
    add_overrides_folder_argument(remove)
    target = remove.add_mutually_exclusive_group(required=True)
    target.add_argument("--prompt", help="package.module:attr, or an entry-point name or ns/key")
    target.add_argument("--shared", metavar="SECTION_KEY", help="remove a shared section file")
    add_tag_argument(remove)
    entry = remove.add_mutually_exclusive_group()
    entry.add_argument("--path", help="remove only this section's entry")
    entry.add_argument("--tool", help="remove only this tool's entry")
    remove.set_defaults(handler=configured(_remove))
    check = action(
        "check",
        "exit 1 when a file is invalid, holds a credential, or has an entry that is stale,"
        " unknown, not accepted or cannot be checked",
        run_check,
        prompt="many",
    )
    check.add_argument(
        "--syntax-only",
        action="store_true",
        help="check files and credentials only, without prompts to compare entries with",
    )
    add_json_argument(check)
    check.add_argument(
        "--evidence",
        choices=("warn", "error"),
        default="warn",
        help="a promoted text, or its evidence, edited since the promotion: a warning (default)"
        " or an error (exit 1)",
    )
    check.add_argument(
        "--fix",
        action="store_true",
        help="first record bodies edited by hand (source = operator, dated) in every valid file",
    )
    from promptkit.cli._transfer import add_transfer_actions

    add_transfer_actions(actions)
    # `promote` runs an evaluation first: its module, and the evaluation options it brings, are
    # imported only when a command line reaches it.
    promote = "copy one tag's overrides over another when an evaluation shows no regression"
    actions.add_parser("promote", help=promote, description=promote).defer("promptkit.cli._promote")


# -- handlers -----------------------------------------------------------------------------------


# One listing, text or --json, of section and shared entries: each output is a path here.
def _list(args: argparse.Namespace) -> int:  # noqa: C901
    from promptkit.cli._overrides_check import known_prompts
    from promptkit.overrides import SharedSectionOverride, entry_states, shared_states

    store = strict_store(args)
    prompts = known_prompts(args.prompt, args.config)
    rows = [("NS", "PROMPT", "TAG", "SECTIONS", "TOOLS", "STALE", "FILE")]
    invalid = 0
    for document in store.read_documents():
        value = document.value
        if document.error is not None:
            # One bad document must not hide the others; its row says what is wrong with it.
            invalid += 1
            problem = str(document.error).splitlines()[0]
            if not problem.startswith(document.location):
                problem = f"{document.location}: {problem}"
            rows.append(("(invalid)", "-", "-", "-", "-", "-", problem))
            continue
        if value is None:
            continue
        if isinstance(value, SharedSectionOverride):
            states = shared_states(prompts.values(), value)
            stale = str(sum(s.status == "stale" for s in states)) if states else "-"
            rows.append(
                ("(shared)", value.section_key, value.tag, "1", "0", stale, str(value.location))
            )
            continue
        prompt = prompts.get((value.ns, value.prompt_key))
        stale = "-"
        if prompt is not None:
            stale = str(sum(s.status == "stale" for s in entry_states(prompt, value)))
        rows.append(
            (
                value.ns,
                value.prompt_key,
                value.tag,
                str(len(value.sections)),
                str(len(value.tools)),
                stale,
                str(value.location),
            )
        )
    if args.json:
        entries = [_list_entry(row) for row in rows[1:]]
        print(json.dumps({"overrides_dir": store.location, "files": entries}, indent=2))
        return 1 if invalid else 0
    if len(rows) == 1:
        print(f"no override files under {args.root}")
        return 0
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    if invalid:
        print(
            f"promptkit: {invalid} invalid override file(s) under {args.root}; run `promptkit"
            " overrides check` to list every problem",
            file=sys.stderr,
        )
        return 1
    return 0


def _list_entry(row: tuple[str, ...]) -> dict[str, object]:
    """One `overrides list --json` entry from a table row."""
    kind = {"(invalid)": "invalid", "(shared)": "shared"}.get(row[0], "prompt")
    if kind == "invalid":
        return {"kind": kind, "problem": row[6]}

    def count(cell: str) -> int | None:
        return None if cell == "-" else int(cell)

    return {
        "kind": kind,
        "ns": row[0] if kind == "prompt" else None,
        "name": row[1],
        "tag": row[2],
        "sections": count(row[3]),
        "tools": count(row[4]),
        "stale": count(row[5]),
        "file": row[6],
    }


def _show(args: argparse.Namespace) -> int:
    from promptkit.overrides import entry_states, require_section_path
    from promptkit.repl import author_text, status_text

    prompt, override, file = _stored_override(args)
    only = "/".join(require_section_path(args.path)) if args.path else None
    if args.json:
        entries = [] if override is None else _show_entries(prompt, override, only)
        document = {
            "file": str(file),
            "exists": override is not None,
            "prompt": f"{prompt.ns}/{prompt.key}",
            "tag": args.tag,
            "entries": entries,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    if override is None:
        _say_no_overrides(prompt, args.tag, file)
        return 0
    print(f"{file}: prompt {prompt.ns}/{prompt.key}, tag {args.tag}")
    for state in entry_states(prompt, override):
        if only is not None and (state.table, state.name) != ("sections", only):
            continue
        print()
        print(f'[{state.table}."{state.name}"] {status_text(state)}')
        if state.table == "sections":
            entry = override.sections[tuple(state.name.split("/"))]
            print(f"  {author_text(entry)}")
            print(_indented(entry.body))
        else:
            tool = override.tools[state.name]
            if tool.description is not None:
                print(_indented(tool.description))
            for name, text in sorted(tool.param_descriptions.items()):
                print(f"  param {name}: {text}")
    return 0


def _seed(args: argparse.Namespace) -> int:
    from promptkit.discovery import find_prompt

    prompt = find_prompt(args.prompt)
    store = strict_store(args)
    before = store.resolve(prompt.descriptor, args.tag)
    after = store.seed(prompt, tag=args.tag)
    added_sections = len(after.sections) - (len(before.sections) if before else 0)
    added_tools = len(after.tools) - (len(before.tools) if before else 0)
    print(
        f"seeded {added_sections} section(s) and {added_tools} tool(s) into {after.location}"
        " (existing entries were kept; sections that read params or opt out are not seeded)"
    )
    return 0


def _set(args: argparse.Namespace) -> int:
    from promptkit.discovery import find_prompt
    from promptkit.overrides import require_section_path

    prompt = find_prompt(args.prompt)
    if args.body is not None:
        body = _argument_text(args.body, "--body")
    elif args.from_file == "-":
        body = _utf8(sys.stdin.buffer.read(_BODY_LIMIT + 1), "stdin")
    else:
        body = _read_text(Path(args.from_file))
    store = strict_store(args)
    result = store.set_section_override(prompt, tag=args.tag, path=args.path, body=body)
    print(f'wrote sections."{"/".join(require_section_path(args.path))}" to {result.location}')
    return 0


def _edit(args: argparse.Namespace) -> int:
    import shlex
    import subprocess
    import tempfile

    from promptkit.discovery import find_prompt
    from promptkit.overrides import (
        default_body,
        merge_view,
        require_section_path,
        unresolved_markers,
    )

    prompt = find_prompt(args.prompt)
    path = require_section_path(args.path)
    section = prompt.section_at(path)
    if section is None:
        raise OverridesError(f"prompt {prompt.ns}/{prompt.key} has no section at {args.path!r}")
    store = strict_store(args)
    override = store.resolve(prompt.descriptor, args.tag)
    current = override.sections.get(path) if override else None
    default = default_body(section, ns=prompt.ns, prompt_key=prompt.key, path=path)
    if current is None:
        starting_text = default
    elif current.expected_hash == section.content_hash:
        starting_text = current.body
    else:
        # The code changed since the override was written: the operator's text must survive.
        starting_text = merge_view(
            override=current.body, old_default=current.code_default, new_default=default
        )
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise OverridesError("set $EDITOR (or $VISUAL) to the command of your text editor")
    prefix = f"promptkit-{prompt.key}-{path[-1]}-"
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", prefix=prefix, suffix=".md", delete=False
    ) as handle:
        handle.write(starting_text)
    draft = Path(handle.name)
    completed = subprocess.run([*shlex.split(editor), str(draft)], check=False)
    if completed.returncode != 0:
        raise OverridesError(
            f"the editor exited with status {completed.returncode}; nothing was written (your"
            f" text is kept in {draft})"
        )
    edited = _read_text(draft)
    markers = unresolved_markers(edited)
    if markers:
        raise OverridesError(
            f"{draft} line {markers[0]}: merge markers (<<<<<<<, |||||||, =======, >>>>>>>) are"
            " left in the text; nothing was written. Keep the text you want, delete the marker"
            f" lines, then store it: promptkit overrides set --prompt {args.prompt} --path"
            f" {args.path} --from-file {draft}"
        )
    if edited == starting_text and current is not None:
        draft.unlink()
        print("no change; nothing was written")
        return 0
    try:
        result = store.set_section_override(prompt, tag=args.tag, path=path, body=edited)
    except OverridesError as error:
        raise OverridesError(f"{error} (your text is kept in {draft})") from error
    draft.unlink()
    print(f'wrote sections."{"/".join(path)}" to {result.location}')
    return 0


def _diff(args: argparse.Namespace) -> int:
    import difflib

    from promptkit.overrides import default_body, entry_states, require_section_path

    prompt, override, file = _stored_override(args)
    if override is None:
        _say_no_overrides(prompt, args.tag, file)
        return 0
    only = require_section_path(args.path) if args.path else None
    for state in entry_states(prompt, override):
        path = tuple(state.name.split("/"))
        if state.table != "sections" or (only is not None and path != only):
            continue
        section = prompt.section_at(path)
        if section is None:
            print(f'# sections."{state.name}": {state.describe()}')
            continue
        if state.status != "fresh":
            print(f'# sections."{state.name}": {state.describe()}')
        default = default_body(section, ns=prompt.ns, prompt_key=prompt.key, path=path)
        lines = list(
            difflib.unified_diff(
                _diff_lines(default),
                _diff_lines(override.sections[path].body),
                fromfile=f"default {prompt.ns}/{prompt.key} {state.name}",
                tofile=f'{file} [sections."{state.name}"]',
            )
        )
        if not lines:
            print(f'# sections."{state.name}": same text as the default')
        sys.stdout.writelines(lines)
    return 0


def _remove(args: argparse.Namespace) -> int:
    store = strict_store(args)
    if args.shared is not None:
        if args.path or args.tool:
            raise OverridesError("--path and --tool apply to a prompt's file, not to --shared")
        file = store.shared_location(args.shared, args.tag)
        removed = store.delete_shared_section(section_key=args.shared, tag=args.tag)
        return _report_removal(removed, str(file))
    from promptkit.discovery import find_prompt

    prompt = find_prompt(args.prompt)
    file = store.prompt_location(prompt.ns, prompt.key, args.tag)
    keys = {"ns": prompt.ns, "prompt_key": prompt.key, "tag": args.tag}
    if args.path:
        removed = store.delete_section_override(**keys, path=args.path)
        return _report_removal(removed, f'sections."{args.path}" of {file}')
    if args.tool:
        removed = store.delete_tool_override(**keys, tool=args.tool)
        return _report_removal(removed, f"tools.{args.tool} of {file}")
    return _report_removal(store.delete(**keys), str(file))


# -- helpers ------------------------------------------------------------------------------------


def _stored_override(args: argparse.Namespace) -> tuple[Prompt[Any], PromptOverride | None, str]:
    """The `--prompt` prompt, its override under `--tag` (None when there is none: not an
    error) and that file."""
    from promptkit.discovery import find_prompt

    prompt = find_prompt(args.prompt)
    store = strict_store(args)
    override = store.resolve(prompt.descriptor, args.tag)
    file = store.prompt_location(prompt.ns, prompt.key, args.tag)
    return prompt, override, file


def _say_no_overrides(prompt: Prompt[Any], tag: str, file: str) -> None:
    # A prompt without overrides is not an error: say so on stdout.
    print(f"no overrides for {prompt.ns}/{prompt.key} tag {tag} ({file} does not exist)")


def _indented(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())


def _diff_lines(text: str) -> list[str]:
    return [line + "\n" for line in text.splitlines()]


# The largest body read from a file or stdin: an override file holds no more (the store's cap).
_BODY_LIMIT = 1024 * 1024


def _read_text(path: Path) -> str:
    """A body file's text: a regular file (a FIFO or a device is refused unread), of at most
    `_BODY_LIMIT` bytes, in UTF-8."""
    from promptkit._input_files import open_regular_file, read_limited

    with open_regular_file(path) as handle:
        return _utf8(read_limited(handle, path, _BODY_LIMIT), str(path))


def _utf8(data: bytes, where: str) -> str:
    """`data` as text; an OverridesError caused by the UnicodeDecodeError (exit status 65)."""
    if len(data) > _BODY_LIMIT:
        raise OverridesError(f"{where}: larger than {_BODY_LIMIT:,} bytes, the most a body holds")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OverridesError(
            f"{where} is not UTF-8 text ({error.reason} at byte {error.start}); save it as UTF-8"
        ) from error


def _argument_text(value: str, option: str) -> str:
    """A command-line value as text: the bytes the shell passed, which Python decodes with
    surrogate escapes, must be UTF-8."""
    return _utf8(os.fsencode(value), option)


def _report_removal(removed: bool, what: str) -> int:
    if removed:
        print(f"removed {what}")
        return 0
    print(f"nothing to remove: {what} does not exist")
    return 1


def _show_entries(
    prompt: Prompt[Any], override: PromptOverride, only: str | None
) -> list[dict[str, object]]:
    """The `overrides show --json` entries: each stored entry, its status and its text."""
    from promptkit.overrides import entry_states

    entries: list[dict[str, object]] = []
    for state in entry_states(prompt, override):
        if only is not None and (state.table, state.name) != ("sections", only):
            continue
        entry: dict[str, object] = {
            "table": state.table,
            "name": state.name,
            "status": state.status,
        }
        if state.table == "sections":
            section = override.sections[tuple(state.name.split("/"))]
            entry["body"] = section.body
            entry["author"] = section.source.kind
            entry["model"] = section.source.model
            entry["updated_at"] = section.updated_at.isoformat()
        else:
            tool = override.tools[state.name]
            entry["description"] = tool.description
            entry["param_descriptions"] = dict(sorted(tool.param_descriptions.items()))
        entries.append(entry)
    return entries
