"""A command line imports the module of the command it names and no other, and every `--help`
reads as it did when the CLI imported every command to build its parser.

Each test runs the real `promptkit` command in a subprocess. What it imported is what is in its
`sys.modules` when it exits, never found by patching; the help texts are compared with the files
in `help/`, written by the CLI when it imported every command to build its parser (argparse's
formatting, at 80 columns).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from promptkit.cli._app import COMMANDS, build_parser, every_command

from ..conftest import offline_env, run_process

HELP_TEXTS = Path(__file__).parent / "help"

# The module of each command, `overrides promote` (deferred within `overrides`) included.
COMMAND_MODULES = {
    **{name: module for name, (module, _) in COMMANDS.items()},
    "overrides promote": "promptkit.cli._promote",
}
# `python -m promptkit ARGS`, writing the names in sys.modules to a file when it exits.
_RUN_AND_LIST_MODULES = """
import atexit, json, runpy, sys
modules_file = sys.argv.pop(1)
atexit.register(lambda: open(modules_file, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "promptkit"
runpy.run_module("promptkit", run_name="__main__", alter_sys=True)
"""
# What only some commands need: none of it is imported to show what the commands are.
HEAVY_MODULES = frozenset({"pydantic", "jinja2", "structlog", "rich", "openai", "anthropic"})
# An application's prompt over a workspace, with the imports an application's module has.
PROJECT_PROMPT = """
from pathlib import Path

from promptkit import (
    HostMount,
    PlanningToolsSection,
    Prompt,
    PromptResponse,
    Session,
    TextSection,
    VfsWorkspaceSection,
    WorkspaceDigestSection,
)
from promptkit.repl import WorkspaceRepl


def build(session: Session, workspace: Path) -> Prompt[None]:
    return Prompt(
        ns="app",
        key="assistant",
        sections=(
            TextSection(title="Role", key="role", text="Help."),
            VfsWorkspaceSection(session=session, mounts=[HostMount(workspace)]),
            PlanningToolsSection(session=session),
            WorkspaceDigestSection(session=session),
        ),
    )
"""


def _imported_by(*args: str, cwd: Path) -> set[str]:
    """The modules in `sys.modules` when `promptkit ARGS` exits."""
    modules_file = cwd / "modules.json"
    completed = run_process(
        [sys.executable, "-c", _RUN_AND_LIST_MODULES, str(modules_file), *args], cwd=cwd
    )
    assert completed.returncode in (0, 1), completed.stderr[-2000:]
    return set(json.loads(modules_file.read_text(encoding="utf-8")))


def _help_file(words: tuple[str, ...]) -> Path:
    return HELP_TEXTS / ("-".join(("promptkit", *words)) + ".txt")


def _every_command_words() -> list[tuple[str, ...]]:
    return [words for words, _ in every_command(build_parser())]


@pytest.mark.parametrize("words", _every_command_words(), ids=lambda words: " ".join(words))
def test_every_help_reads_as_before_the_commands_were_imported_on_demand(
    words: tuple[str, ...], tmp_path: Path
) -> None:
    env = offline_env() | {"COLUMNS": "80"}
    completed = run_process(
        [sys.executable, "-m", "promptkit", *words, "--help"], cwd=tmp_path, env=env
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == _help_file(words).read_text(encoding="utf-8")


def test_every_help_text_on_file_belongs_to_a_command() -> None:
    shown = {_help_file(words).name for words in _every_command_words()}

    assert {path.name for path in HELP_TEXTS.iterdir()} == shown


def test_the_top_level_help_imports_no_command_and_no_heavy_library(tmp_path: Path) -> None:
    imported = _imported_by("--help", cwd=tmp_path)

    assert "promptkit.cli._app" in imported
    assert imported & set(COMMAND_MODULES.values()) == set()
    assert {name.split(".")[0] for name in imported} & HEAVY_MODULES == set()


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_a_command_help_imports_that_command_module_only(command: str, tmp_path: Path) -> None:
    imported = _imported_by(*command.split(), "--help", cwd=tmp_path)

    others = set(COMMAND_MODULES.values()) - {COMMAND_MODULES[command]}
    if command == "overrides promote":
        # Reached through `overrides`; it runs the evaluation `eval` runs, with its options.
        others -= {COMMAND_MODULES["overrides"], COMMAND_MODULES["eval"]}
    assert COMMAND_MODULES[command] in imported
    assert imported & others == set()


def test_overrides_list_imports_neither_another_command_nor_the_evaluation_code(
    tmp_path: Path,
) -> None:
    (tmp_path / "overrides").mkdir()

    imported = _imported_by("overrides", "list", cwd=tmp_path)

    assert "promptkit.cli._overrides" in imported
    assert imported & (set(COMMAND_MODULES.values()) - {"promptkit.cli._overrides"}) == set()
    assert not any(name.startswith("promptkit.evals") for name in imported)


def test_overrides_list_reads_no_package_metadata_when_no_package_declares_prompts(
    tmp_path: Path,
) -> None:
    (tmp_path / "overrides").mkdir()

    imported = _imported_by("overrides", "list", cwd=tmp_path)

    assert "importlib.metadata" not in imported


def test_overrides_list_builds_a_workspace_prompt_without_what_only_a_run_needs(
    tmp_path: Path,
) -> None:
    (tmp_path / "overrides").mkdir()
    (tmp_path / "app_prompts.py").write_text(PROJECT_PROMPT, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.promptkit]\nprompts = ["app_prompts:build"]\n', encoding="utf-8"
    )

    imported = _imported_by("overrides", "list", cwd=tmp_path)

    assert "app_prompts" in imported
    # Stored sessions, the secret rules, how files are listed and searched, conversations.
    assert imported.isdisjoint(
        {
            "promptkit.session._store",
            "promptkit.secrets",
            "promptkit.hostfiles._git",
            "promptkit.hostfiles._git_index",
            "promptkit.hostfiles._listing_process",
            "promptkit.workspace._grep",
            "promptkit.adapters._conversation",
            "subprocess",
        }
    )
    assert {name.split(".")[0] for name in imported} & HEAVY_MODULES == set()
