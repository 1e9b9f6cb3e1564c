"""What the repository's own evidence says it runs: which CI workflows check a change, the
runner CI puts in front of a tool, the folder a CI step runs in, targets that hooks also run,
and the tools a manifest's dependencies imply."""

from __future__ import annotations

import json
from pathlib import Path

from promptkit.repofacts import render_static_digest, scan_workspace

from ..conftest import committed_repo

CI = ".github/workflows/ci.yml"


def workflow(*commands: str, on: str = "[push, pull_request]") -> str:
    runs = "".join(f"      - run: {command}\n" for command in commands)
    return f"name: CI\non: {on}\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n{runs}"


def commands_of(root: Path) -> dict[str, str]:
    return {command.command: command.standing for command in scan_workspace(root).commands}


def test_a_target_that_a_hook_also_runs_stays_a_command_of_its_own(tmp_path: Path) -> None:
    files = {
        "Taskfile.yml": "version: '3'\ntasks:\n  test:\n    cmds:\n      - mix test --trace\n",
        "lefthook.yml": "pre-push:\n  commands:\n    test:\n      run: task test\n",
    }

    commands = commands_of(committed_repo(tmp_path / "shop", files))

    assert commands["task test"] == "bare-target"
    assert "lefthook run pre-push" in commands


def test_an_aggregate_target_does_not_swallow_the_targets_it_runs(tmp_path: Path) -> None:
    scripts = {"lint": "deno lint && deno task lint:docs", "ok": "deno task lint && deno task test"}
    files = {"deno.json": json.dumps({"tasks": scripts})}

    facts = scan_workspace(committed_repo(tmp_path / "std", files))

    lint = next(command for command in facts.commands if command.command == "deno task lint")
    ok = next(command for command in facts.commands if command.command == "deno task ok")
    assert lint.detail == "deno lint && deno task lint:docs"
    assert ok.aliases == ()


def test_a_workflow_that_only_runs_on_a_schedule_checks_no_change(tmp_path: Path) -> None:
    files = {
        "Makefile": "test:\n\tpytest\nevals:\n\tpython evals.py\n",
        CI: workflow("make test"),
        ".github/workflows/nightly-evals.yml": workflow("make evals", on="\n  schedule:\n"),
        ".github/workflows/evals.yml": workflow("make evals", on="\n  workflow_dispatch:\n"),
    }

    facts = scan_workspace(committed_repo(tmp_path / "agent", files))

    standings = {command.command: command.standing for command in facts.commands}
    assert standings["make test"] == "ci"
    assert standings["make evals"] == "listed"
    assert [workflow.checks_changes for workflow in facts.workflows] == [True, False, False]


def test_python_tools_run_under_the_runner_ci_puts_in_front_of_them(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'agent'\n[tool.pytest.ini_options]\n",
        CI: workflow("uv sync", "uv run ruff check ."),
    }

    commands = commands_of(committed_repo(tmp_path / "agent", files))

    assert "uv run pytest" in commands
    assert "pytest" not in commands


def test_a_ci_step_run_in_a_folder_is_a_command_in_that_folder(tmp_path: Path) -> None:
    files = {
        "demo/composer.json": '{"name": "acme/demo"}',
        "demo/src/App.php": "<?php\n",
        CI: workflow("cd demo && vendor/bin/phpstan", "cd missing && make test"),
    }

    commands = commands_of(committed_repo(tmp_path / "mono", files))

    assert commands == {"cd demo && vendor/bin/phpstan": "ci"}


def test_a_flake_that_takes_treefmt_nix_formats_with_nix_fmt(tmp_path: Path) -> None:
    flake = (
        '{\n  description = "Agents";\n  inputs.treefmt-nix.url = "github:numtide/treefmt-nix";\n'
        "  outputs = inputs: { };\n}\n"
    )

    commands = commands_of(committed_repo(tmp_path / "agents", {"flake.nix": flake}))

    assert "nix fmt" in commands


def test_a_manifests_test_dependencies_name_their_tools(tmp_path: Path) -> None:
    files = {
        "Gemfile": 'source "https://rubygems.org"\ngem "minitest"\n',
        "java/pom.xml": (
            "<project><artifactId>sdk</artifactId><dependencies><dependency>"
            "<groupId>org.testcontainers</groupId><artifactId>junit-jupiter</artifactId>"
            "</dependency></dependencies></project>\n"
        ),
    }

    tools = scan_workspace(committed_repo(tmp_path / "sdk", files)).tools

    assert {"minitest", "docker"} <= set(tools)


def test_broader_targets_come_before_the_cases_they_cover(tmp_path: Path) -> None:
    scripts = {
        "deflake:test:integration:docker": "node deflake.js",
        "auth": "node auth.js",
        "test:e2e:chrome": "vitest --browser chrome",
        "test:e2e": "vitest e2e",
        "build:all": "node build.js --all",
        **{f"release:step{n}": f"node release.js {n}" for n in range(12)},
    }
    files = {"package.json": json.dumps({"name": "cli", "scripts": scripts})}

    digest = render_static_digest(scan_workspace(committed_repo(tmp_path / "cli", files)))

    assert "- Test: `npm run test:e2e` = `vitest e2e` (package.json)" in digest
    catalogue = next(line for line in digest.splitlines() if line.startswith("- Also in"))
    assert catalogue.startswith(
        "- Also in `package.json`: `npm run test:e2e:chrome`,"
        " `npm run deflake:test:integration:docker`, `npm run auth`, `npm run release:step0`,"
    )


def test_the_text_of_a_multi_line_string_or_here_document_is_no_command(tmp_path: Path) -> None:
    steps = (
        "name: CI\non: [push]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: |\n"
        "          gh api graphql -f query='\n"
        "            nodes {\n"
        "              databaseId\n"
        "            }' -f owner=acme\n"
        "          cat <<EOF > body.json\n"
        "          pytest-report summary\n"
        "          EOF\n"
        "          make test\n"
        "      - shell: pwsh\n"
        "        run: |\n"
        "          $validCount++\n"
        "          docker info\n"
    )
    files = {"Makefile": "test:\n\tpytest\n", CI: steps}

    facts = scan_workspace(committed_repo(tmp_path / "bot", files))

    assert facts.workflows[0].runnable == ("make test",)


def test_npm_lifecycle_hooks_are_no_commands(tmp_path: Path) -> None:
    scripts = {"pretest": "node setup.js", "test": "vitest", "postbuild": "node x.js"}
    files = {"package.json": json.dumps({"name": "cli", "scripts": scripts, "//": "notes"})}

    commands = commands_of(committed_repo(tmp_path / "cli", files))

    assert set(commands) == {"npm test", "npm run postbuild"}


def test_a_command_run_in_a_devenv_shell_is_that_command(tmp_path: Path) -> None:
    wrapped = (
        "${{ steps.build.outputs.path }}/bin/devenv --system ${{ inputs.system }} shell --"
        " cargo nextest run --retries 3"
    )
    files = {"Cargo.toml": '[package]\nname = "devenv"\n', CI: workflow(wrapped)}

    commands = commands_of(committed_repo(tmp_path / "devenv", files))

    assert commands["cargo nextest run --retries 3"] == "ci"


def test_a_tool_a_targets_recipe_runs_is_one_of_the_projects_tools(tmp_path: Path) -> None:
    files = {
        "Taskfile.yaml": (
            "version: '3'\ntasks:\n  fmt:html:\n    cmds:\n      - prettier --write index.html\n"
            "  docs:\n    cmds:\n      - RUSTDOCFLAGS='-D warnings' cargo doc\n"
        ),
    }

    tools = scan_workspace(committed_repo(tmp_path / "crush", files)).tools

    assert {"prettier", "cargo"} <= set(tools)
    assert "warnings'" not in tools


def test_a_packages_tool_runs_in_its_folder_when_nothing_at_the_root_runs_it(
    tmp_path: Path,
) -> None:
    dev = {"require-dev": {"phpstan/phpstan": "^2", "phpunit/phpunit": "^11"}}
    files = {
        "composer.json": json.dumps(
            {"name": "acme/mono", "require-dev": {"phpunit/phpunit": "^11"}}
        ),
        "demo/composer.json": json.dumps({"name": "acme/demo", **dev}),
        "demo/src/App.php": "<?php\n",
    }

    commands = commands_of(committed_repo(tmp_path / "mono", files))

    assert "cd demo && vendor/bin/phpstan analyse" in commands
    assert "cd demo && vendor/bin/phpunit" not in commands  # the root's phpunit covers it
    assert "vendor/bin/phpunit" in commands


def test_an_applications_console_runs_through_php(tmp_path: Path) -> None:
    files = {
        "composer.json": json.dumps({"name": "acme/site"}),
        "bin/console": "#!/usr/bin/env php\n<?php\n",
        "shop/composer.json": json.dumps({"name": "acme/shop"}),
        "shop/artisan": "#!/usr/bin/env php\n<?php\n",
    }

    commands = commands_of(committed_repo(tmp_path / "apps", files))

    assert {"php bin/console", "cd shop && php artisan"} <= set(commands)


def test_a_gems_executables_run_through_bundler(tmp_path: Path) -> None:
    files = {
        "Gemfile": 'source "https://rubygems.org"\ngemspec\n',
        "linter.gemspec": 'Gem::Specification.new do |spec|\n  spec.name = "linter"\nend\n',
        "exe/rubocop": "#!/usr/bin/env ruby\n",
        "exe/linter-server": "#!/usr/bin/env ruby\n",
        "exe/README.md": "# Executables\n",
    }

    facts = scan_workspace(committed_repo(tmp_path / "linter", files))

    purposes = {c.command: c.purpose for c in facts.commands if c.command.startswith("bundle")}
    assert purposes == {"bundle exec rubocop": "lint", "bundle exec linter-server": "other"}


def test_a_bazel_workspace_offers_no_other_tools_inferred_commands(tmp_path: Path) -> None:
    files = {
        "MODULE.bazel": 'module(name = "futility")\n',
        "go.mod": "module example.com/futility\n\ngo 1.23\n",
        "cmd/tool/main.go": "package main\n",
        "pyproject.toml": "[project]\nname = 'scripts'\n[tool.pytest.ini_options]\n",
        CI: workflow("bazel test //...", "pytest scripts/"),
    }

    commands = commands_of(committed_repo(tmp_path / "futility", files))

    assert set(commands) == {"bazel test //...", "pytest scripts/", "bazel build //..."}
