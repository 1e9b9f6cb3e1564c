"""The kinds of files maintainers name that a digest names too: scripts in any folder of
scripts, docs named in capitals, a build's shared logic, a suite's areas, the instruction files
kept for agents, git hooks; and the files it leaves out of the largest modules."""

from __future__ import annotations

from pathlib import Path

from promptkit.repofacts import render_static_digest, scan_workspace

from ..conftest import write_files


def digest_of(root: Path) -> str:
    return render_static_digest(scan_workspace(root), max_tokens=100_000)


def line_starting(digest: str, start: str) -> str:
    return next(line for line in digest.splitlines() if line.lstrip().startswith(start))


def test_a_folder_of_scripts_under_another_name_lists_its_scripts(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "tool/run_all_tests.sh": "#!/bin/sh\n",
            "tool/generate_all": "#!/bin/sh\n",
            "Scripts/release.sh": "#!/bin/sh\n",
            "Scripts/package_app.sh": "#!/bin/sh\n",
            "util/Cache.cs": "class Cache {}\n",
            "util/Clock.cs": "class Clock {}\n",
        },
    )

    commands = {command.command for command in scan_workspace(tmp_path).commands}

    assert {
        "./tool/run_all_tests.sh",
        "./tool/generate_all",
        "./Scripts/release.sh",
        "./Scripts/package_app.sh",
    } <= commands
    assert not [command for command in commands if "util/" in command]


def test_docs_named_in_capitals_are_contributor_docs(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "docs/RELEASING.md": "# Releasing\n",
            "docs/usage.md": "# Usage\n",
            ".github/DEVELOPMENT_GUIDE.md": "# Development\n",
            ".github/CODE_OF_CONDUCT.md": "# Conduct\n",
        },
    )

    line = line_starting(digest_of(tmp_path), "- Contributor docs:")

    assert line == "- Contributor docs: `.github/DEVELOPMENT_GUIDE.md`, `docs/RELEASING.md`"


def test_a_builds_shared_logic_is_named(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "CMakeLists.txt": "project(db CXX)\n",
            "cmake/warnings.cmake": "add_compile_options(-Wall)\n",
            "eng/Testing.props": "<Project></Project>\n",
            "project/deps/package.mill": "object deps\n",
            "third_party/zlib/zconf.cmake": "set(Z 1)\n",
            "tests/fixtures/sample.cmake": "set(S 1)\n",
        },
    )

    line = line_starting(digest_of(tmp_path), "- Build logic:")

    assert line == (
        "- Build logic: `cmake/warnings.cmake`, `eng/Testing.props`, `project/deps/package.mill`"
    )


def test_a_suite_names_its_areas_that_no_folder_line_names(tmp_path: Path) -> None:
    files = {f"testing/{area}/case_{n}.rs": "fn t() {}\n" for area in "abcdef" for n in range(3)}
    files.update({f"testing/stress/case_{n}.rs": "fn t() {}\n" for n in range(5)})
    files.update({f"src/module_{n}.rs": "fn f() {}\n" for n in range(40)})
    write_files(tmp_path, files)

    line = line_starting(digest_of(tmp_path), "- Tests in")

    # The folder's own line names its four largest areas.
    assert line == "- Tests in `testing` (23 files): areas `testing/d`, `testing/e`, `testing/f`"


def test_instruction_files_for_agents_are_named_and_their_rules_come_last(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            "AGENTS.md": "# Agents\n\n- Always run `make test` before pushing.\n",
            ".github/instructions/readme.instructions.md": (
                "---\napplyTo: '**/README.md'\n---\n- Always include a Prerequisites section.\n"
            ),
        },
    )

    digest = render_static_digest(scan_workspace(tmp_path))

    assert "- Agent docs: `.github/instructions/readme.instructions.md`" in digest
    watch_outs = digest.partition("### Watch-outs\n")[2].splitlines()
    assert watch_outs[0].startswith("- Always run `make test`")


def test_git_hooks_the_repository_keeps_are_named(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "githooks/pre-commit": "#!/bin/sh\nbazel run //tools/format\n",
            ".changeset/config.json": "{}\n",
            "lib/default.nix": "{ }\n",
        },
    )

    facts = scan_workspace(tmp_path)

    assert {"githooks/pre-commit", ".changeset/config.json"} <= set(facts.notable_files)
    assert facts.entry_points == ("lib/default.nix",)


def test_shipped_bundles_and_other_peoples_code_are_not_among_the_largest_modules(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            "src/wwwroot/js/d3.v7.min.js": "var a=1;\n" * 900,
            "src/Model/FoundryModel.Generated.cs": "class M {}\n" * 800,
            "third_party/catch/catch.hpp": "int c;\n" * 700,
            "benchmark/queries/q1.sql": "select 1;\n" * 600,
            "src/Hosting/Builder.cs": "class B {}\n" * 10,
        },
    )

    assert scan_workspace(tmp_path).largest_modules == ("src/Hosting/Builder.cs",)


def test_the_paths_contributor_docs_and_the_readme_point_at_are_named(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "CONTRIBUTING.md": (
                "# Contributing\n\nHelpers live in `tests/Common/Utils` and the release steps in"
                " [releasing](docs/dev/releasing.md); see `missing/file.md`.\n\n"
                "```sh\ncat src/app/main.rs\n```\n"
            ),
            "README.md": (
                "[Deutsch](support/readme/README_DE.md) · edit `config/default.yml` first.\n"
            ),
            "tests/Common/Utils/Clock.cs": "class Clock {}\n",
            "docs/dev/releasing.md": "# Releasing\n",
            "support/readme/README_DE.md": "# Hallo\n",
            "config/default.yml": "a: 1\n",
            "src/app/main.rs": "fn main() {}\n",
        },
    )

    digest = digest_of(tmp_path)

    assert "- Named in `CONTRIBUTING.md`: `tests/Common/Utils`, `docs/dev/releasing.md`" in digest
    assert "- Named in `README.md`: `config/default.yml`" in digest
    assert "README_DE" not in digest
