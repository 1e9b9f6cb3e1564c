"""The static writer at scale: it reads only what it parses, never fails on total size, honours
every mount and the run's globs, and leaves promptkit's own folders out, so a second run on an
unchanged tree changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptkit.adapters import ProviderAdapter
from promptkit.digest import WorkspaceDigestSection
from promptkit.errors import OptimizationError
from promptkit.optimize import StaticDigestWriter, optimize_workspace_digest
from promptkit.prompt import Prompt
from promptkit.session import Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall
from promptkit.workspace import HostMount, VfsWorkspaceSection

from ..workspace.conftest import CountingReader
from .test_cli import digest_part, promptkit


def big_tree(root: Path) -> Path:
    """48 text files of 900 KiB (about 42 MiB of text) beside a pyproject.toml and a README."""
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "big"\n')
    (root / "README.md").write_text("# Big\n\nAlways run `make test` before pushing.\n")
    line = "# padding " + "x" * 89 + "\n"
    chunk = line * (900 * 1024 // len(line))
    for index in range(48):
        folder = root / f"data{index % 4}"
        folder.mkdir(exist_ok=True)
        (folder / f"table{index}.py").write_text(chunk)
    return root


def prompt_over(session: Session, *mounts: HostMount) -> Prompt[None]:
    return Prompt(
        ns="tests",
        key="scale",
        sections=(
            VfsWorkspaceSection(session=session, mounts=mounts),
            WorkspaceDigestSection(session=session),
        ),
    )


def test_static_optimize_succeeds_on_a_tree_whose_text_is_well_over_32_mib(
    tmp_path: Path,
) -> None:
    tree = big_tree(tmp_path / "big")

    optimized = promptkit("optimize", str(tree), "--provider", "static", cwd=tmp_path)

    assert optimized.returncode == 0, optimized.stderr
    assert "- 50 files" in digest_part(optimized.stdout)


def test_the_static_writer_reads_only_the_files_it_parses_and_the_heads_of_the_largest(
    tmp_path: Path,
) -> None:
    tree = big_tree(tmp_path / "big")
    session = Session()
    reader = CountingReader()

    optimize_workspace_digest(
        StaticDigestWriter(reader=reader), prompt_over(session, HostMount(tree)), session=session
    )

    # The README is read for the paths it names; the largest modules (up to 60 named as room
    # allows) are opened only to see whether they say they are generated.
    assert reader.reads[:2] == ["pyproject.toml", "README.md"]
    assert 0 < len(reader.reads[2:]) <= 90
    assert all(path.endswith(".py") for path in reader.reads[2:])
    assert max(reader.limits[2:]) <= 1024


def test_the_static_writer_describes_every_mount_with_its_globs(tmp_path: Path) -> None:
    code, docs = tmp_path / "code", tmp_path / "docs"
    (code / "src").mkdir(parents=True)
    (code / "src" / "app.py").write_text("print('app')\n")
    (code / "scratch").mkdir()
    (code / "scratch" / "junk.py").write_text("x = 1\n")
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n")
    session = Session()
    prompt = prompt_over(
        session,
        HostMount(code, mount_path="/code", exclude_glob=("scratch",)),
        HostMount(docs, mount_path="/docs"),
    )

    result = optimize_workspace_digest(StaticDigestWriter(), prompt, session=session)

    assert "- 2 files" in result.digest
    assert "`docs/` (1 file)" in result.digest and "`code/` (1 file)" in result.digest
    assert "scratch" not in result.digest


def test_include_and_exclude_narrow_what_the_static_digest_describes(repo: Path) -> None:
    session = Session()

    result = optimize_workspace_digest(
        StaticDigestWriter(),
        prompt_over(session, HostMount(repo)),
        session=session,
        include=["src/**", "tests/**"],
        exclude=["tests"],
    )

    assert "- 2 files" in result.digest
    assert "tests/" not in result.digest


def test_include_on_a_mount_that_has_include_globs_is_refused_before_anything_runs(
    repo: Path,
) -> None:
    session = Session()
    prompt = prompt_over(session, HostMount(repo, include_glob=("src/**",)))

    with pytest.raises(OptimizationError, match="cannot narrow it further"):
        optimize_workspace_digest(StaticDigestWriter(), prompt, session=session, include=["**"])


def test_optimize_twice_on_an_unchanged_repository_gives_byte_identical_files(
    repo: Path, tmp_path: Path
) -> None:
    command = ("optimize", str(repo), "--scope", "global", "--state-dir", str(repo / ".state"))
    first = promptkit(*command, cwd=tmp_path)
    files = sorted(path for path in (repo / "overrides").rglob("*.toml"))
    before = {path: path.read_bytes() for path in files}

    second = promptkit(*command, cwd=tmp_path)

    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert digest_part(second.stdout) == digest_part(first.stdout)
    assert len(files) == 1  # GLOBAL writes the digest once, as the shared file
    assert {path: path.read_bytes() for path in files} == before
    assert "overrides" not in digest_part(second.stdout)
    assert ".state" not in digest_part(second.stdout)


def test_cli_include_and_exclude_reach_the_digest(repo: Path, tmp_path: Path) -> None:
    optimized = promptkit(
        "optimize", str(repo), "--include", "src/**", "--include", "Makefile",
        "--exclude", "src/demo/cli.py", "--state-dir", "state", cwd=tmp_path,
    )  # fmt: skip

    assert optimized.returncode == 0, optimized.stderr
    digest = digest_part(optimized.stdout)
    assert "- 2 files" in digest
    assert "README" not in digest


def test_a_model_writer_explores_only_the_narrowed_mounts(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session, run = Session(), Session()
    server.enqueue(
        Reply.tool_calls(ToolCall("vfs_read_file", {"path": "/README.md"})),
        Reply.json({"digest": "## Layout\n- `src/`"}),
    )

    openai_adapter.optimize(
        prompt_over(session, HostMount(repo)),
        session=session,
        optimization_session=run,
        exclude=["README.md"],
    )

    (call,) = run.select_all(ToolInvoked)
    assert call.success is False
    assert "no file /README.md" in call.result_message
