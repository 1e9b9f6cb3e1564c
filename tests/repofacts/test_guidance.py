"""Agent-instruction files and contributor docs: read once each, their code-block commands
canonical, their rules watch-outs that never push commands out of the budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from promptkit.repofacts import render_static_digest, scan_workspace
from promptkit.repofacts._guidance import Evidence, extract_documented_commands

AGENTS = """\
# Working here

Always run the full suite before pushing.

```bash
$ uv run pytest -q   # the suite
uv run ruff check --fix
print("not a command")
```

Format with `uv run ruff format .` and never edit `generated/` by hand.
"""


Writer = Callable[[Path, str, str | bytes], Path]


def write_all(write: Writer, root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        write(root, relative, content)


def test_code_block_and_inline_commands_are_taken_without_prompts_or_comments() -> None:
    # Inline code is a command when the repository runs its program (here uv).
    assert extract_documented_commands(AGENTS, Evidence(programs=frozenset({"uv"}))) == [
        "uv run pytest -q",
        "uv run ruff check --fix",
        "uv run ruff format .",
    ]


def test_agent_file_commands_are_canonical_and_come_first(tmp_path: Path, write: Writer) -> None:
    project = {"pyproject.toml": "[project]\nname = 'shop'\n", "uv.lock": "version = 1\n"}
    makefile = {"Makefile": "clean:\n\trm -rf build\n"}
    write_all(write, tmp_path, {"AGENTS.md": AGENTS, **project, **makefile})

    digest = render_static_digest(scan_workspace(tmp_path))

    assert digest.splitlines()[1] == "- Test: `uv run pytest -q` (AGENTS.md; documented)"
    assert "- Lint: `uv run ruff check --fix` (AGENTS.md; documented)" in digest


def test_a_claude_md_symlinked_to_agents_md_is_read_once(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, {"AGENTS.md": AGENTS})
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")

    facts = scan_workspace(tmp_path)

    assert facts.guidance_files == ("AGENTS.md",)
    rules = [watch_out.text for watch_out in facts.watch_outs]
    assert rules.count("Always run the full suite before pushing.") == 1


def test_an_identical_copy_is_read_once(tmp_path: Path, write: Writer) -> None:
    write_all(
        write,
        tmp_path,
        {"AGENTS.md": AGENTS, "GEMINI.md": AGENTS, "CLAUDE.md": "Never push to main.\n"},
    )

    assert scan_workspace(tmp_path).guidance_files == ("AGENTS.md", "CLAUDE.md")


def test_every_kind_of_agent_file_is_read(tmp_path: Path, write: Writer) -> None:
    write_all(
        write,
        tmp_path,
        {
            "GEMINI.md": "Never commit secrets to the repository.\n",
            ".github/copilot-instructions.md": "Always add a changelog entry.\n",
            ".cursor/rules/style.mdc": "Avoid global state in modules.\n",
        },
    )

    facts = scan_workspace(tmp_path)

    assert set(facts.guidance_files) == {
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".cursor/rules/style.mdc",
    }
    assert len(facts.watch_outs) == 3


def test_rules_never_push_commands_out_of_the_budget(tmp_path: Path, write: Writer) -> None:
    rules = "".join(
        f"- You must always follow rule number {n} of this project.\n" for n in range(80)
    )
    makefile = "check:\n\tpytest\n"
    write_all(
        write, tmp_path, {"AGENTS.md": rules + "\n```sh\nmake check\n```\n", "Makefile": makefile}
    )

    digest = render_static_digest(scan_workspace(tmp_path), max_tokens=150)

    assert "`make check`" in digest
    assert digest.count("You must always follow") < 80
