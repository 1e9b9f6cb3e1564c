"""Generated repositories of four ecosystems: the canonical commands come first, the budget
holds, and the digest is byte-identical across processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit.repofacts import estimate_tokens, render_static_digest, scan_workspace

GITHUB_SCRIPT_STEP = """\
      - uses: actions/github-script@v7
        with:
          script: |
            const label = context.payload.label
            await github.rest.issues.addLabels({ labels: [label] })
"""


def workflow(*commands: str) -> str:
    runs = "".join(f"      - run: {command}\n" for command in commands)
    return (
        "name: CI\non: [push]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n"
        + runs
        + GITHUB_SCRIPT_STEP
    )


UV_PROJECT = {
    "pyproject.toml": (
        '[project]\nname = "shop"\nrequires-python = ">=3.12"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        "[tool.pytest.ini_options]\naddopts = '-q'\n[tool.ruff]\nline-length = 100\n"
        "[tool.mypy]\nstrict = true\n"
    ),
    "uv.lock": "version = 1\n" + "# padding\n" * 120_000,
    "Makefile": "test:\n\tuv run pytest -x\nlint:\n\tuv run ruff check .\ndocs:\n\tmkdocs build\n",
    ".github/workflows/ci.yml": workflow("make test", "uv run mypy src"),
    "src/shop/__init__.py": '"""Orders, carts and payments for the shop."""\n',
    "src/shop/cart.py": "x = 1\n",
    "tests/test_cart.py": "def test_cart(): pass\n",
}

PNPM_MONOREPO = {
    "package.json": (
        '{"name": "mono", "private": true, "packageManager": "pnpm@9.0.0",'
        ' "scripts": {"test": "turbo run test", "lint": "eslint .", "build": "turbo run build",'
        ' "release": "changeset publish"}, "devDependencies": {"turbo": "2", "eslint": "9"}}'
    ),
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    "packages/core/package.json": (
        '{"name": "@mono/core", "description": "Shared domain types and helpers.",'
        ' "scripts": {"test": "vitest run", "build": "tsup"}, "devDependencies": {"vitest": "1"}}'
    ),
    "packages/web/package.json": (
        '{"name": "@mono/web", "description": "The web front end.",'
        ' "scripts": {"test": "vitest run", "build": "vite build", "dev": "vite"}}'
    ),
    "packages/core/src/index.ts": "export const x = 1\n",
    "packages/web/src/main.ts": "export const y = 2\n",
    ".github/workflows/ci.yml": workflow("pnpm install --frozen-lockfile", "pnpm test"),
}

CARGO_WORKSPACE = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*", "xtask"]\nresolver = "2"\n',
    ".cargo/config.toml": '[alias]\nxtask = "run --package xtask --"\n',
    "crates/parser/Cargo.toml": (
        '[package]\nname = "parser"\nversion = "0.1.0"\ndescription = "A fast parser."\n'
    ),
    "crates/parser/src/lib.rs": "//! Parsing source text into syntax trees.\npub fn f() {}\n",
    "crates/parser/src/lexer.rs": "pub fn g() {}\n",
    "xtask/Cargo.toml": '[package]\nname = "xtask"\nversion = "0.1.0"\n',
    "xtask/src/main.rs": "fn main() {}\n",
    "CONTRIBUTING.md": "# Contributing\n\n```sh\ncargo xtask lint\n```\n",
    ".github/workflows/ci.yml": workflow("cargo test --workspace --locked"),
}

GO_TASKFILE = {
    "go.mod": "module example.com/agent\n\ngo 1.23\n",
    "Taskfile.yml": (
        "version: '3'\ntasks:\n  test:\n    desc: Run the tests\n    cmds:\n"
        "      - go test -race ./...\n  lint:\n    cmds:\n      - golangci-lint run\n"
        "  fmt:\n    cmds:\n      - gofumpt -w .\n"
    ),
    ".golangci.yml": "formatters:\n  enable:\n    - gofumpt\n",
    "internal/agent/doc.go": "// Package agent runs the tool loop.\npackage agent\n",
    "internal/agent/loop.go": "package agent\n",
    "cmd/agent/main.go": "package main\n",
    ".github/workflows/ci.yml": workflow("task test"),
}

ECOSYSTEMS = {
    "uv-python": (UV_PROJECT, "- Test: `make test` = `uv run pytest -x` (Makefile; CI runs it)"),
    "pnpm-monorepo": (PNPM_MONOREPO, "- Test: `pnpm test` = `turbo run test` (package.json; CI"),
    "cargo-workspace": (
        CARGO_WORKSPACE,
        "- Test: `cargo test --workspace --locked` (.github/workflows/ci.yml; CI runs it)",
    ),
    "go-taskfile": (GO_TASKFILE, "- Test: `task test` = `go test -race ./...` (Taskfile.yml; CI"),
}

Builder = Callable[[str], Path]


@pytest.fixture
def build(tmp_path: Path) -> Builder:
    def build(ecosystem: str) -> Path:
        root = tmp_path / ecosystem
        for relative, content in ECOSYSTEMS[ecosystem][0].items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        return root

    return build


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_the_command_ci_runs_comes_first(build: Builder, ecosystem: str) -> None:
    digest = render_static_digest(scan_workspace(build(ecosystem)))

    first_command = digest.split("\n")[1]
    assert first_command.startswith(ECOSYSTEMS[ecosystem][1])


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
@pytest.mark.parametrize("budget", [120, 400])
def test_the_budget_holds_and_keeps_the_canonical_command(
    build: Builder, ecosystem: str, budget: int
) -> None:
    digest = render_static_digest(scan_workspace(build(ecosystem)), max_tokens=budget)

    assert estimate_tokens(digest) <= budget
    assert ECOSYSTEMS[ecosystem][1] in digest


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_the_digest_is_byte_identical_across_processes(build: Builder, ecosystem: str) -> None:
    root = build(ecosystem)
    script = (
        "import sys\nfrom promptkit.repofacts import render_static_digest, scan_workspace\n"
        "sys.stdout.buffer.write(render_static_digest(scan_workspace(sys.argv[1])).encode())\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(root)], check=True, capture_output=True
        ).stdout
        for _ in range(2)
    }

    assert outputs == {render_static_digest(scan_workspace(root)).encode()}


def test_github_script_steps_are_not_shown_as_shell(build: Builder) -> None:
    digest = render_static_digest(scan_workspace(build("pnpm-monorepo")), max_tokens=100_000)

    assert "context.payload" not in digest
    assert "- Other CI files: `.github/workflows/ci.yml`" in digest


def test_a_large_uv_lock_still_says_commands_run_through_uv(build: Builder) -> None:
    facts = scan_workspace(build("uv-python"))

    assert ("too_large", 1) in facts.skipped
    assert "uv run mypy src" in {command.command for command in facts.commands}
    assert "commands run through `uv run`" in facts.projects[0]


def test_workspace_packages_scripts_collapse_to_one_line_per_set_of_packages(
    build: Builder,
) -> None:
    digest = render_static_digest(scan_workspace(build("pnpm-monorepo")), max_tokens=100_000)

    assert "- `pnpm test`, `pnpm build` in `packages/core/`, `packages/web/`" in digest
    assert "- `pnpm dev` in `packages/web/`" in digest


def test_folders_are_explained_by_their_manifest_readme_or_docstring(build: Builder) -> None:
    digests = {
        name: render_static_digest(scan_workspace(build(name)), max_tokens=100_000)
        for name in ECOSYSTEMS
    }

    assert "`src/shop/` (2 files): Orders, carts and payments for the shop." in digests["uv-python"]
    assert (
        "`packages/core/` (2 files): Shared domain types and helpers." in digests["pnpm-monorepo"]
    )
    assert "`crates/parser/` (3 files): A fast parser." in digests["cargo-workspace"]
    assert (
        "`crates/parser/src/` (2 files): Parsing source text into syntax trees."
        in (digests["cargo-workspace"])
    )
    assert (
        "`internal/agent/` (2 files): Package agent runs the tool loop." in digests["go-taskfile"]
    )


def test_cargo_aliases_and_documented_commands_are_listed(build: Builder) -> None:
    commands = {c.command: c for c in scan_workspace(build("cargo-workspace")).commands}

    assert commands["cargo xtask"].detail == "cargo run --package xtask --"
    assert commands["cargo xtask lint"].standing == "documented"


def test_gofumpt_replaces_gofmt_where_golangci_formats_with_it(build: Builder) -> None:
    commands = scan_workspace(build("go-taskfile")).commands

    assert "gofmt -l ." not in [c.command for c in commands]
    assert ("task fmt", "gofumpt -w .") in [(c.command, c.detail) for c in commands]


def test_defaults_are_never_offered_for_a_tool_nothing_configures(build: Builder) -> None:
    commands = [c.command for c in scan_workspace(build("pnpm-monorepo")).commands]

    assert not [c for c in commands if c.startswith(("pre-commit", "mypy", "python -m build"))]
