"""scan_workspace: layout, tooling, commands, CI steps and watch-outs from real project files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from promptkit.repofacts import (
    DirectoryCount,
    LanguageCount,
    ToolCommand,
    WatchOut,
    WorkspaceFacts,
    scan_workspace,
)
from promptkit.repofacts._tooling import ToolingCollector, parse_config_file, parse_workflow

Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]

PYPROJECT = """\
[project]
name = "demo"
requires-python = ">=3.11"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.pytest.ini_options]
addopts = "-q"

[tool.ruff]
line-length = 100

[tool.ruff.format]
quote-style = "double"

[tool.mypy]
strict = true
files = ["src"]

[tool.coverage.run]
branch = true

[tool.hatch.envs.default.scripts]
cov = "pytest --cov"

[tool.hatch.envs.docs.scripts]
build = "mkdocs build"
"""

MAKEFILE = """\
.PHONY: test lint
VENV := .venv
test: lint
\t@$(VENV)/bin/pytest -x
lint:
\t-ruff check .
fmt format:
\truff format .
build/%.o: %.c
\tcc -c $<
clean: ; rm -rf build
"""

PACKAGE_JSON = """\
{
  "name": "web-app",
  "scripts": {
    "test": "vitest run",
    "lint": "eslint .",
    "typecheck": "tsc --noEmit",
    "build": "vite build",
    "dev": "vite"
  },
  "devDependencies": {"vitest": "1", "eslint": "9", "typescript": "5"}
}
"""

WORKFLOW = """\
name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install
        run: pip install -e '.[dev]'
      - name: Test
        run: |
          pytest -q
          ruff check .
      - name: Report
        shell: python
        run: |
          import json
"""

AGENTS = """\
# Agent notes

- Always run `make test` before committing.
- The code lives in `src/`.
- Never edit files under `generated/` by hand; regenerate them instead.

```sh
# must not be read: code fences are skipped
```
"""

CONTRIBUTING = """\
# Contributing

Thanks for helping! Pull requests must include tests. We review weekly.
You should avoid force-pushing to shared branches
once a review has started.

| must | not read from tables |
"""


@pytest.fixture
def project(repo: Path, write: Writer, commit: Committer) -> Path:
    write(repo, "pyproject.toml", PYPROJECT)
    write(repo, "Makefile", MAKEFILE)
    write(repo, "web/package.json", PACKAGE_JSON)
    write(repo, "web/pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    write(repo, "web/src/app.ts", "export const x = 1\n")
    write(repo, "web/src/view.tsx", "export const y = 2\n")
    write(repo, ".github/workflows/ci.yml", WORKFLOW)
    write(repo, "AGENTS.md", AGENTS)
    write(repo, "CONTRIBUTING.md", CONTRIBUTING)
    write(repo, "README.md", "# demo\n")
    write(repo, "LICENSE", "MIT\n")
    write(repo, "src/demo/__init__.py", "")
    write(repo, "src/demo/core.py", "x = 1\n")
    write(repo, "src/demo/cli/main.py", "x = 1\n")
    write(repo, "tests/test_core.py", "def test(): pass\n")
    commit(repo)
    return repo


@pytest.fixture
def facts(project: Path) -> WorkspaceFacts:
    return scan_workspace(project)


def commands_from(facts: WorkspaceFacts, source: str) -> set[tuple[str, str, str | None]]:
    return {(c.purpose, c.command, c.detail) for c in facts.commands if c.source == source}


def test_scan_counts_code_languages_and_other_file_types(facts: WorkspaceFacts) -> None:
    assert LanguageCount("Python", 4, is_code=True) in facts.languages
    assert LanguageCount("TypeScript", 2, is_code=True) in facts.languages
    assert LanguageCount("Markdown", 3, is_code=False) in facts.languages
    assert facts.languages[0].language == "Python"


def test_scan_counts_files_per_top_level_directory_with_largest_subdirectories(
    facts: WorkspaceFacts,
) -> None:
    assert facts.layout[:2] == (
        DirectoryCount("web/", 4, (DirectoryCount("web/src/", 2),)),
        DirectoryCount("src/", 3, (DirectoryCount("src/demo/", 3),)),
    )
    assert facts.root_file_count == 6
    assert facts.file_count == 15


def test_scan_lists_notable_files(facts: WorkspaceFacts) -> None:
    assert facts.notable_files == (
        "AGENTS.md",
        "CONTRIBUTING.md",
        "Makefile",
        "README.md",
        "pyproject.toml",
    )


def test_scan_reads_pyproject_tool_tables(facts: WorkspaceFacts) -> None:
    # `ruff check .` and `ruff format .` are what `make lint` and `make fmt` run: folded there;
    # CI runs `pytest -q`, which covers the inferred `pytest`.
    assert commands_from(facts, "pyproject.toml") == {
        ("test", "hatch run cov", "pytest --cov"),
        ("typecheck", "mypy", None),
        ("build", "hatch run docs:build", "mkdocs build"),
        ("build", "hatch build", None),
    }
    assert (
        "Python project `demo` (requires-python >=3.11; build backend hatchling.build;"
        in (facts.projects[1])
    )


def test_scan_folds_a_command_into_the_target_that_runs_it(facts: WorkspaceFacts) -> None:
    aliases = {c.command: c.aliases for c in facts.commands if c.aliases}
    assert aliases == {"make lint": ("ruff check .",), "make fmt": ("ruff format .",)}


def test_scan_lists_makefile_targets_with_their_first_recipe_line(facts: WorkspaceFacts) -> None:
    assert commands_from(facts, "Makefile") == {
        ("test", "make test", "$(VENV)/bin/pytest -x"),
        ("lint", "make lint", "ruff check ."),
        ("format", "make fmt", "ruff format ."),
        ("format", "make format", "ruff format ."),
        ("other", "make clean", "rm -rf build"),
    }


def test_scan_lists_package_json_scripts_run_through_the_lockfiles_package_manager(
    facts: WorkspaceFacts,
) -> None:
    assert commands_from(facts, "web/package.json") == {
        ("test", "cd web && pnpm test", "vitest run"),
        ("lint", "cd web && pnpm lint", "eslint ."),
        ("typecheck", "cd web && pnpm typecheck", "tsc --noEmit"),
        ("build", "cd web && pnpm build", "vite build"),
        ("other", "cd web && pnpm dev", "vite"),
    }
    assert {"pnpm", "vitest", "eslint", "typescript"} <= set(facts.tools)


def test_scan_ranks_commands_ci_first_then_documented_then_bare_targets(
    facts: WorkspaceFacts,
) -> None:
    standings = [(c.command, c.standing) for c in facts.commands]
    # CI runs `ruff check .`, which `make lint` runs; AGENTS.md names `make test`.
    assert standings[:3] == [("pytest -q", "ci"), ("make lint", "ci"), ("make test", "documented")]
    assert ("make format", "bare-target") in standings
    bare = standings.index(("make format", "bare-target"))
    assert bare < standings.index(("make clean", "listed"))


def test_scan_reads_ci_workflow_run_steps_but_not_script_steps(facts: WorkspaceFacts) -> None:
    (workflow,) = facts.workflows
    assert (workflow.path, workflow.name) == (".github/workflows/ci.yml", "CI")
    assert workflow.commands == ("pip install -e '.[dev]'", "pytest -q", "ruff check .")
    assert "github-actions" in facts.tools


def test_scan_takes_watch_outs_from_agent_notes_first_then_contributing(
    facts: WorkspaceFacts,
) -> None:
    assert facts.watch_outs == (
        WatchOut("AGENTS.md", "Always run `make test` before committing."),
        WatchOut(
            "AGENTS.md", "Never edit files under `generated/` by hand; regenerate them instead."
        ),
        WatchOut("CONTRIBUTING.md", "Pull requests must include tests."),
        WatchOut(
            "CONTRIBUTING.md",
            "You should avoid force-pushing to shared branches once a review has started.",
        ),
    )


def test_scan_records_the_workspace_manifest(project: Path, facts: WorkspaceFacts) -> None:
    assert facts.manifest.source == str(project.resolve())
    assert facts.manifest.ref == "main"
    assert facts.manifest.fingerprint is not None


def test_scan_lists_tox_environments(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "tox.ini", "[tox]\nenvlist = py311, lint\n[testenv]\n[testenv:lint]\n")
    facts = scan_workspace(tmp_path)
    assert commands_from(facts, "tox.ini") == {
        ("test", "tox", "envs: py311, lint"),
        ("lint", "tox -e lint", None),
    }


def test_scan_lists_nox_sessions_under_their_names(tmp_path: Path, write: Writer) -> None:
    write(
        tmp_path,
        "noxfile.py",
        "import nox\n\n@nox.session\ndef tests(session): ...\n\n"
        "@nox.session(python=['3.11'], name='type-check')\ndef mypy(session): ...\n\n"
        "def helper(): ...\n",
    )
    facts = scan_workspace(tmp_path)
    assert commands_from(facts, "noxfile.py") == {
        ("test", "nox -s tests", None),
        ("typecheck", "nox -s type-check", None),
    }


def test_scan_lists_justfile_recipes(tmp_path: Path, write: Writer) -> None:
    write(
        tmp_path,
        "justfile",
        'set shell := ["bash", "-c"]\nversion := "1"\nalias t := test\n\n'
        "# run the tests\ntest *args:\n    cargo nextest run {{args}}\n\nfmt:\n  cargo fmt\n",
    )
    facts = scan_workspace(tmp_path)
    assert commands_from(facts, "justfile") == {
        ("test", "just test", "cargo nextest run {{args}}"),
        ("format", "just fmt", "cargo fmt"),
    }


def test_scan_reads_pre_commit_hook_ids(tmp_path: Path, write: Writer) -> None:
    write(
        tmp_path,
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    hooks:\n"
        "      - id: ruff\n      - id: ruff-format\n",
    )
    facts = scan_workspace(tmp_path)
    assert commands_from(facts, ".pre-commit-config.yaml") == {
        ("lint", "pre-commit run --all-files", "hooks: ruff, ruff-format"),
    }


def test_scan_detects_cargo_and_go_projects(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "Cargo.toml", '[package]\nname = "fast"\nversion = "0.1.0"\n')
    write(tmp_path, "svc/go.mod", "module example.com/svc\n\ngo 1.22\n")
    facts = scan_workspace(tmp_path)
    assert ("test", "cargo test", None) in commands_from(facts, "Cargo.toml")
    assert "go" in facts.tools
    assert commands_from(facts, "svc/go.mod") == set()
    assert facts.projects == (
        "Go module `example.com/svc` (go 1.22; svc/go.mod)",
        "Rust crate `fast` (Cargo.toml)",
    )


def test_projects_alike_in_all_but_name_share_one_line(tmp_path: Path, write: Writer) -> None:
    manifest = '[project]\nname = "{}"\nrequires-python = ">=3.10"\n'
    for name in ("core", "cli", "evals"):
        write(tmp_path, f"{name}/pyproject.toml", manifest.format(name))
    write(tmp_path, "legacy/pyproject.toml", '[project]\nname = "legacy"\n')

    facts = scan_workspace(tmp_path)

    assert facts.projects == (
        "Python project `legacy` (legacy/pyproject.toml)",
        "Python projects `cli`, `core`, `evals` (requires-python >=3.10; cli/pyproject.toml,"
        " core/pyproject.toml, evals/pyproject.toml)",
    )


def test_scan_reads_gitlab_script_lists(tmp_path: Path, write: Writer) -> None:
    write(
        tmp_path,
        ".gitlab-ci.yml",
        "test:\n  before_script:\n    - pip install .\n"
        "  script:\n    - pytest\n    - 'make lint'\n",
    )
    (workflow,) = scan_workspace(tmp_path).workflows
    assert workflow.commands == ("pip install .", "pytest", "make lint")


def test_scan_survives_malformed_configuration(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "pyproject.toml", "[tool.pytest\nbroken =")
    write(tmp_path, "package.json", "{not json")
    write(tmp_path, "tox.ini", "no section header\n")
    write(tmp_path, "noxfile.py", "def broken(:\n")
    write(tmp_path, "Cargo.toml", "= nope")
    facts = scan_workspace(tmp_path)
    assert facts.commands == ()
    assert facts.file_count == 5


def test_scan_of_an_empty_repository_has_no_facts_but_a_manifest(repo: Path) -> None:
    facts = scan_workspace(repo)
    assert (facts.file_count, facts.languages, facts.commands, facts.watch_outs) == (0, (), (), ())
    assert facts.manifest.notes == ("repository has no commits yet",)


def test_scan_never_reads_configuration_through_a_symlink_leaving_the_root(
    tmp_path: Path, write: Writer
) -> None:
    root = tmp_path / "root"
    write(tmp_path, "elsewhere/Makefile", "leak:\n\tcat /etc/shadow\n")
    root.mkdir()
    (root / "Makefile").symlink_to(tmp_path / "elsewhere" / "Makefile")
    facts = scan_workspace(root)
    assert facts.commands == ()
    assert facts.skipped == (("symlink_outside_root", 1),)


def test_scan_redacts_credentials_before_parsing(tmp_path: Path, write: Writer) -> None:
    token = "ghp_Fake0123456789abcdefghijklmnopqrstuv"
    write(tmp_path, "Makefile", f"deploy:\n\tTOKEN={token} ./deploy.sh\n")
    (command,) = scan_workspace(tmp_path).commands
    assert command == ToolCommand(
        "other", "make deploy", "Makefile", "TOKEN=[REDACTED:github-token] ./deploy.sh"
    )


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400))
def test_configuration_parsers_never_raise_on_arbitrary_text(text: str) -> None:
    collector = ToolingCollector(present=frozenset({"a/package.json"}), read=lambda *_: text)
    for name in (
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "noxfile.py",
        "Makefile",
        "justfile",
        "Taskfile.yml",
        "package.json",
        "pnpm-workspace.yaml",
        "Cargo.toml",
        ".cargo/config.toml",
        "go.mod",
        ".golangci.yml",
        ".pre-commit-config.yaml",
        "lefthook.yml",
    ):
        parse_config_file(collector, name)
    parse_workflow(".github/workflows/x.yml", text)
    parse_workflow("Jenkinsfile", text)


def test_scan_lists_scripts_folder_entry_points_under_one_source(
    tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, "scripts/test.sh", "#!/bin/sh\npytest\n")
    write(tmp_path, "scripts/release.py", "print('release')\n")
    write(tmp_path, "script/bootstrap", "#!/bin/sh\n")
    write(tmp_path, "scripts/data.csv", "a,b\n")
    facts = scan_workspace(tmp_path)
    assert {(c.purpose, c.command, c.source) for c in facts.commands} == {
        ("test", "./scripts/test.sh", "scripts/"),
        ("other", "python scripts/release.py", "scripts/"),
        ("other", "./script/bootstrap", "script/"),
    }


def test_scan_reads_lefthook_hooks_with_their_first_command(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      run: ruff check\n")
    (command,) = scan_workspace(tmp_path).commands
    assert (command.command, command.detail) == ("lefthook run pre-commit", "ruff check")


def test_pre_commit_hooks_run_through_prek_where_ci_uses_prek(
    tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, ".pre-commit-config.yaml", "repos: []\n")
    write(
        tmp_path, ".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: prek run -a\n"
    )
    commands = [c.command for c in scan_workspace(tmp_path).commands]
    assert "prek run --all-files" in commands
    assert not [c for c in commands if c.startswith("pre-commit")]


def test_npm_workspaces_packages_scripts_are_read(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "package.json", '{"name": "root", "workspaces": ["libs/*/*"]}')
    write(tmp_path, "package-lock.json", "{}")
    write(tmp_path, "libs/ui/button/package.json", '{"scripts": {"test": "jest"}}')
    facts = scan_workspace(tmp_path)
    assert ("cd libs/ui/button && npm test", "jest") in {
        (c.command, c.detail) for c in facts.commands
    }


def test_a_workflow_name_leaves_out_its_yaml_comment() -> None:
    unquoted = parse_workflow("a.yml", "name: autofix.ci  # For security reasons\non: push\n")
    quoted = parse_workflow("b.yml", 'name: "Build #1"  # the first\non: push\n')

    assert (unquoted.name, quoted.name) == ("autofix.ci", "Build #1")
