"""Where the doc pages and the test suites are: the digest names the docs site (generator,
pages, navigation, translations, migration guides), each large suite's helpers and data, the
tests that run the docs, the folders of generated code, and configuration at the top."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from promptkit.repofacts import render_static_digest, scan_workspace

Writer = Callable[[Path, str, str | bytes], Path]


def write_all(write: Writer, root: Path, paths: list[str]) -> None:
    for relative in paths:
        write(root, relative, f"# {relative}\n")


def digest_of(root: Path) -> str:
    return render_static_digest(scan_workspace(root), max_tokens=100_000)


def line_starting(digest: str, start: str) -> str:
    return next(line for line in digest.splitlines() if line.startswith(start))


def test_an_astro_site_names_its_config_pages_and_translations(
    tmp_path: Path, write: Writer
) -> None:
    pages = "docs/src/content/docs"
    write_all(
        write,
        tmp_path,
        [
            "docs/astro.config.mjs",
            f"{pages}/index.mdx",
            f"{pages}/guides/agents.mdx",
            f"{pages}/ja/index.mdx",
            f"{pages}/zh/index.mdx",
        ],
    )

    line = line_starting(digest_of(tmp_path), "- Docs site")

    assert line == (
        "- Docs site (Astro): config `docs/astro.config.mjs`; pages in `docs/src/content/docs`"
        " (home `docs/src/content/docs/index.mdx`; translations `docs/src/content/docs/ja`,"
        " `docs/src/content/docs/zh`)"
    )


def test_an_mkdocs_site_names_its_pages_and_home(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, ["mkdocs.yml", "docs/index.md", "docs/usage.md"])

    line = line_starting(digest_of(tmp_path), "- Docs site")

    assert (
        line == "- Docs site (MkDocs): config `mkdocs.yml`; pages in `docs` (home `docs/index.md`)"
    )


def test_a_navigation_file_in_docs_makes_a_site_without_a_generator(
    tmp_path: Path, write: Writer
) -> None:
    write_all(write, tmp_path, ["docs/navigation.yml", "docs/index.md", "docs/tools.md"])

    line = line_starting(digest_of(tmp_path), "- Docs site")

    assert line == (
        "- Docs site: pages in `docs` (home `docs/index.md`; navigation `docs/navigation.yml`)"
    )


def test_a_lone_language_code_folder_is_not_a_translation(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, ["mkdocs.yml", "docs/index.md", "docs/it/usage.md"])

    assert "translations" not in digest_of(tmp_path)


def test_a_plain_docs_folder_is_named_for_its_migration_guides(
    tmp_path: Path, write: Writer
) -> None:
    guides = [f"content/docs/0{n}-topic/page.mdx" for n in range(1, 8)]
    migrations = [f"content/docs/08-migration-guides/v{n}.mdx" for n in range(1, 4)]
    write_all(write, tmp_path, guides + migrations)

    line = line_starting(digest_of(tmp_path), "- Docs site")

    assert line == (
        "- Docs site: pages in `content/docs` (migration guides `content/docs/08-migration-guides`)"
    )


def test_a_plain_docs_folder_with_nothing_more_to_say_has_no_site_line(
    tmp_path: Path, write: Writer
) -> None:
    write_all(write, tmp_path, [f"docs/page{n}.md" for n in range(12)])

    assert "Docs site" not in digest_of(tmp_path)


def test_a_suite_names_its_helper_modules_and_data_folders(tmp_path: Path, write: Writer) -> None:
    write_all(
        write,
        tmp_path,
        [
            "tests/conftest.py",
            "tests/cassette_utils.py",
            "tests/test_agent.py",
            "tests/models/test_openai.py",
            "tests/assets/image.txt",
            "tests/models/cassettes/openai.yaml",
        ],
    )

    line = line_starting(digest_of(tmp_path), "- Tests in")

    assert line == (
        "- Tests in `tests` (6 files): helpers `tests/cassette_utils.py`;"
        " data `tests/assets`, `tests/models/cassettes`"
    )


def test_data_folders_in_every_area_of_a_suite_are_left_to_the_pattern(
    tmp_path: Path, write: Writer
) -> None:
    areas = [f"tests/area{n}/fixtures/input.txt" for n in range(6)]
    write_all(write, tmp_path, [*areas, "tests/fixtures/shared.txt", "tests/test_x.py"])

    line = line_starting(digest_of(tmp_path), "- Tests in")

    assert line == "- Tests in `tests` (8 files): data `tests/fixtures`"


def test_a_small_suite_names_its_files(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, ["e2e/e2e_test.go", "e2e/README.md", "main.go"])

    line = line_starting(digest_of(tmp_path), "- Tests in")

    assert line == "- Tests in `e2e` (2 files): helpers `e2e/README.md`, `e2e/e2e_test.go`"


def test_a_lone_test_file_in_a_folder_is_not_a_suite(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, ["packages/ai/test/index.ts", "packages/ai/src/index.ts"])

    assert "Tests in" not in digest_of(tmp_path)


def test_tests_that_run_the_docs_are_named(tmp_path: Path, write: Writer) -> None:
    write_all(
        write,
        tmp_path,
        ["tests/test_examples.py", "tests/test_docs_parity.py", "tests/test_agent.py"],
    )

    line = line_starting(digest_of(tmp_path), "- Tests that run the docs")

    assert line == (
        "- Tests that run the docs' code: `tests/test_docs_parity.py`, `tests/test_examples.py`"
    )


def test_generated_folders_are_named_largest_first(tmp_path: Path, write: Writer) -> None:
    write_all(
        write,
        tmp_path,
        [
            "crates/ast/src/generated/visit.rs",
            "crates/ast/src/generated/derive.rs",
            "apps/cli/src/generated/schema.ts",
            "crates/ast/src/lib.rs",
        ],
    )

    line = line_starting(digest_of(tmp_path), "- Generated code")

    assert line == (
        "- Generated code (regenerate, do not edit): `crates/ast/src/generated`,"
        " `apps/cli/src/generated`"
    )


def test_a_generated_folder_among_test_fixtures_is_not_named_as_generated_code(
    tmp_path: Path, write: Writer
) -> None:
    write_all(
        write,
        tmp_path,
        [
            "apps/fmt/test/fixtures/generated/a.js",
            "apps/fmt/test/fixtures/generated/b.js",
            "apps/fmt/test/fixtures/generated/c.js",
            "crates/ast/src/generated/visit.rs",
            "crates/ast/src/lib.rs",
        ],
    )

    line = line_starting(digest_of(tmp_path), "- Generated code")

    assert line == "- Generated code (regenerate, do not edit): `crates/ast/src/generated`"


def test_configuration_at_the_top_is_named_with_docs_and_config(
    tmp_path: Path, write: Writer
) -> None:
    write_all(
        write,
        tmp_path,
        ["dist-workspace.toml", "tsc-multi.json", "package-lock.json", "notes.txt"],
    )

    line = line_starting(digest_of(tmp_path), "- Docs and config")

    assert line == "- Docs and config: `dist-workspace.toml`, `tsc-multi.json`"


def test_skills_past_the_first_four_are_named_without_their_descriptions(
    tmp_path: Path, write: Writer
) -> None:
    for name in "abcdef":
        write(
            tmp_path,
            f".agents/skills/{name}/SKILL.md",
            f"---\nname: {name}\ndescription: Use for {name}.\n---\n",
        )

    digest = digest_of(tmp_path)

    assert "- Skill `.agents/skills/d/SKILL.md`: Use for d." in digest
    assert line_starting(digest, "- More skills") == (
        "- More skills: `.agents/skills/e/SKILL.md`, `.agents/skills/f/SKILL.md`"
    )


def test_a_vitepress_site_keeps_its_pages_beside_the_vitepress_folder(
    tmp_path: Path, write: Writer
) -> None:
    write_all(write, tmp_path, ["docs/.vitepress/config.mts", "docs/index.md", "README.md"])

    line = line_starting(digest_of(tmp_path), "- Docs site")

    assert line == (
        "- Docs site (VitePress): config `docs/.vitepress/config.mts`; pages in `docs`"
        " (home `docs/index.md`)"
    )


def test_a_plain_docs_folder_with_only_a_home_page_has_no_site_line(
    tmp_path: Path, write: Writer
) -> None:
    write_all(write, tmp_path, ["docs/README.md", *(f"docs/page{n}.md" for n in range(12))])

    assert "Docs site" not in digest_of(tmp_path)


def test_a_test_named_for_docker_does_not_run_the_docs(tmp_path: Path, write: Writer) -> None:
    write_all(write, tmp_path, ["tests/test_docker.py", "tests/dockerUnit.test.ts"])

    assert "Tests that run the docs" not in digest_of(tmp_path)
