"""VfsWorkspaceSection: what is listed, confinement of tool paths, writes, bounds, clone rules."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from structlog.testing import capture_logs

from promptkit.errors import PromptValidationError, WorkspaceError
from promptkit.hostfiles import PathGlob
from promptkit.prompt import Prompt
from promptkit.session import Session, SessionStore
from promptkit.workspace import HostMount, VfsWorkspaceSection
from promptkit.workspace._vfs import VfsFile, VfsHostCopy, normalize_vfs_path

from .conftest import CONTEXT, call, snapshot_tree, tool_named


def vfs(root: Path, **mount: object) -> VfsWorkspaceSection:
    return VfsWorkspaceSection(session=Session(), mounts=[HostMount(root, **mount)])  # type: ignore[arg-type]


def vfs_paths(section: VfsWorkspaceSection) -> set[str]:
    return {path for path, _ in section.overlay.files()}


def test_selected_files_are_listed_in_the_session(host_tree: Path) -> None:
    section = vfs(host_tree)

    assert vfs_paths(section) == {
        "/README.md",
        "/data.txt",
        "/latin1.txt",
        "/src/pkg/app.py",
        "/src/pkg/util.py",
    }


def test_credential_binary_huge_and_symlinked_files_are_not_listed(host_tree: Path) -> None:
    section = vfs(host_tree)

    for left_out in ("/.env", "/logo.png", "/huge.log", "/passwd-link", "/etc-link"):
        result = call(section, "vfs_read_file", path=left_out)
        assert not result.success, left_out
        assert "no file" in result.message
    copies = section.session.select_all(VfsHostCopy)
    assert "root:" not in "".join(copy.content for copy in copies)


def test_a_file_found_binary_when_read_is_a_failed_result(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path="/data.txt")

    assert not result.success
    assert "data.txt is a binary file" in result.message


def test_body_lists_the_mount_and_what_was_left_out(host_tree: Path) -> None:
    section = vfs(host_tree, mount_path="/repo")
    text = Prompt(ns="tests", key="vfs", sections=(section,)).render().text

    assert "- `/repo`: 5 files" in text
    assert "1 credential" in text
    assert "1 too_large" in text
    assert "vfs_grep" in text


def test_non_utf8_text_is_readable_with_replacement_characters(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path="/latin1.txt")

    assert result.success
    assert "caf\ufffd au lait" in result.message


@pytest.mark.parametrize(
    "path", ["../etc/passwd", "/../etc/passwd", "src/../../etc/passwd", "../../../../etc/shadow"]
)
def test_parent_escapes_are_refused_with_a_failed_result(host_tree: Path, path: str) -> None:
    section = vfs(host_tree)
    for tool, arguments in (
        ("vfs_read_file", {"path": path}),
        ("vfs_list_directory", {"path": path}),
        ("vfs_write_file", {"path": path, "content": "x"}),
        ("vfs_grep", {"pattern": "root", "path": path}),
        ("vfs_glob", {"pattern": "*", "path": path}),
    ):
        result = call(section, tool, **arguments)
        assert not result.success, tool
        assert "climbs above the workspace root" in result.message


def test_dot_dot_inside_the_tree_is_normalised(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path="src/pkg/../pkg/./util.py")

    assert result.success
    assert result.value["path"] == "/src/pkg/util.py"


def test_absolute_paths_outside_the_mounts_are_refused(host_tree: Path) -> None:
    section = vfs(host_tree, mount_path="/repo")

    read = call(section, "vfs_read_file", path="/etc/passwd")
    write = call(section, "vfs_write_file", path="/etc/cron.d/job", content="x")

    assert not read.success and "outside the mounted workspace (/repo)" in read.message
    assert not write.success and "outside the mounted workspace" in write.message
    assert call(section, "vfs_read_file", path="/repo/README.md").success


def test_host_absolute_path_is_not_read_from_the_host(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path=str(host_tree / "README.md"))

    assert not result.success
    assert "no file" in result.message


def test_nul_byte_in_a_path_is_refused(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path="README.md\x00.txt")

    assert not result.success
    assert "NUL" in result.message


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.builds(
        lambda lead, parts: lead + "/".join(parts),
        st.sampled_from(["", "/"]),
        st.lists(st.sampled_from(["..", ".", "", "w", "etc", "a\\b", " ", "\x00", "README.md"])),
    )
)
def test_every_tool_answers_any_path_with_a_result(host_tree: Path, path: str) -> None:
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(host_tree, mount_path="/w")])
    before = snapshot_tree(host_tree)

    for tool, arguments in (
        ("vfs_read_file", {"path": path}),
        ("vfs_list_directory", {"path": path}),
        ("vfs_write_file", {"path": path or "x", "content": "written"}),
        ("vfs_glob", {"pattern": path or "*", "path": path}),
    ):
        result = call(section, tool, **arguments)
        assert isinstance(result.message, str) and result.message

    assert snapshot_tree(host_tree) == before
    assert all(file.path.startswith("/w/") for file in section.session.select_all(VfsFile))


@given(raw=st.text(max_size=40))
def test_normalised_paths_are_absolute_and_free_of_dot_segments(raw: str) -> None:
    try:
        path = normalize_vfs_path(raw)
    except WorkspaceError:
        return
    assert path.startswith("/")
    assert all(part not in ("", ".", "..") for part in path.split("/")[1:] if path != "/")


def test_write_stays_in_the_vfs_and_never_touches_the_host(host_tree: Path) -> None:
    section = vfs(host_tree)
    before = snapshot_tree(host_tree)
    readme = (host_tree / "README.md").read_bytes()

    overwrite = call(section, "vfs_write_file", path="/README.md", content="replaced\n")
    create = call(section, "vfs_write_file", path="/notes/plan.md", content="plan\n")
    append = call(section, "vfs_write_file", path="/notes/plan.md", content="more\n", mode="append")

    assert overwrite.success and create.success and append.success
    assert "host files are unchanged" in overwrite.message
    assert call(section, "vfs_read_file", path="/README.md").message.endswith("replaced")
    assert "     2  more" in call(section, "vfs_read_file", path="/notes/plan.md").message
    assert snapshot_tree(host_tree) == before
    assert (host_tree / "README.md").read_bytes() == readme
    assert not (host_tree / "notes").exists()


def test_create_mode_refuses_an_existing_file(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_write_file", path="/README.md", content="x", mode="create")

    assert not result.success
    assert "already exists" in result.message


def test_writing_over_a_directory_is_refused(host_tree: Path) -> None:
    section = vfs(host_tree)

    assert not call(section, "vfs_write_file", path="/src", content="x").success
    assert not call(section, "vfs_write_file", path="/", content="x").success
    under_file = call(section, "vfs_write_file", path="/README.md/x", content="x")
    assert not under_file.success and "is a file" in under_file.message


def test_write_larger_than_the_file_limit_is_refused(host_tree: Path) -> None:
    section = vfs(host_tree, max_file_bytes=64)

    result = call(section, "vfs_write_file", path="/big.txt", content="y" * 65)

    assert not result.success
    assert "64-byte limit" in result.message


def test_read_file_pages_by_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    section = vfs(tmp_path)

    page = call(section, "vfs_read_file", path="lines.txt", offset=3, limit=2)

    assert page.message.splitlines() == [
        "/lines.txt lines 4-5 of 10 (continue with offset=5)",
        "     4  line 4",
        "     5  line 5",
    ]
    assert page.value == {"path": "/lines.txt", "first_line": 4, "last_line": 5, "total_lines": 10}


def test_reading_past_the_end_is_a_failed_result(tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text("one\n")

    result = call(vfs(tmp_path), "vfs_read_file", path="short.txt", offset=5)

    assert not result.success
    assert "past the end" in result.message


def test_reading_a_directory_points_to_listing(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_read_file", path="/src")

    assert not result.success
    assert "vfs_list_directory" in result.message


def test_list_directory_shows_files_and_subdirectories(host_tree: Path) -> None:
    section = vfs(host_tree)

    root = call(section, "vfs_list_directory", path="/")
    package = call(section, "vfs_list_directory", path="/src/pkg")

    assert root.value["entries"] == ["README.md", "data.txt", "latin1.txt", "src/"]
    app_size = (host_tree / "src/pkg/app.py").stat().st_size
    util_size = (host_tree / "src/pkg/util.py").stat().st_size
    assert package.message.splitlines() == [
        "/src/pkg: 0 directories, 2 files",
        f"app.py ({app_size} bytes)",
        f"util.py ({util_size} bytes)",
    ]


def test_listing_above_a_mount_shows_the_mount_point(host_tree: Path) -> None:
    section = vfs(host_tree, mount_path="/work/repo")

    assert call(section, "vfs_list_directory", path="/").value["entries"] == ["work/"]
    assert call(section, "vfs_list_directory", path="/work").value["entries"] == ["repo/"]


def test_listing_a_missing_directory_fails(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_list_directory", path="/nope")

    assert not result.success


def test_glob_double_star_spans_directories(host_tree: Path) -> None:
    section = vfs(host_tree)

    assert call(section, "vfs_glob", pattern="**/*.py").value["matches"] == [
        "/src/pkg/app.py",
        "/src/pkg/util.py",
    ]
    assert call(section, "vfs_glob", pattern="*.md").value["matches"] == ["/README.md"]
    assert call(section, "vfs_glob", pattern="*.py", path="/src/pkg").value["total"] == 2
    assert call(section, "vfs_glob", pattern="src/*.py").value["matches"] == []


def test_glob_results_are_bounded(tmp_path: Path) -> None:
    for index in range(230):
        (tmp_path / f"file{index:03}.txt").write_text("x\n")

    result = call(vfs(tmp_path), "vfs_glob", pattern="*.txt")

    assert len(result.value["matches"]) == 200
    assert result.value["total"] == 230
    assert "30 more matches not shown" in result.message


def test_grep_finds_matching_lines_with_locations(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_grep", pattern=r"def \w+")

    assert result.message.splitlines() == [
        "/src/pkg/app.py:4: def main():",
        "/src/pkg/util.py:1: def helper():",
    ]


def test_grep_path_glob_and_case_options(host_tree: Path) -> None:
    section = vfs(host_tree)

    only_util = call(section, "vfs_grep", pattern="def", path="/src", glob="**/util.py")
    insensitive = call(section, "vfs_grep", pattern="HOST TREE", ignore_case=True)

    assert [m["path"] for m in only_util.value["matches"]] == ["/src/pkg/util.py"]
    assert [m["path"] for m in insensitive.value["matches"]] == ["/README.md"]


def test_grep_results_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("match\n" * 500)

    result = call(vfs(tmp_path), "vfs_grep", pattern="match", max_matches=7)

    assert len(result.value["matches"]) == 7
    assert result.value["truncated"] is True
    assert "more matches not shown (limit 7)" in result.message


def test_grep_refuses_more_than_the_hard_match_limit(host_tree: Path) -> None:
    tool = tool_named(vfs(host_tree), "vfs_grep")

    with pytest.raises(Exception, match="max_matches"):
        tool.parse_arguments({"pattern": "x", "max_matches": 10_000})


def test_grep_with_an_invalid_regex_is_a_failed_result(host_tree: Path) -> None:
    result = call(vfs(host_tree), "vfs_grep", pattern="(unclosed")

    assert not result.success
    assert "invalid regular expression" in result.message


def test_catastrophic_pattern_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("a" * 40 + "!\n")
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(tmp_path)], grep_timeout=0.5)

    result = call(section, "vfs_grep", pattern="(a+)+$")

    assert not result.success
    assert "stopped after 0.5s" in result.message


def test_a_plain_pattern_over_more_files_than_the_time_allows_returns_what_it_found(
    tmp_path: Path,
) -> None:
    for index in range(2_000):
        (tmp_path / f"f{index:04d}.txt").write_text(f"needle {index}\n" + "hay\n" * 250)
    section = VfsWorkspaceSection(
        session=Session(), mounts=[HostMount(tmp_path)], grep_timeout=0.01
    )

    result = call(section, "vfs_grep", pattern="needle 1999$")

    assert result.success
    assert "stopped after 0.01s" in result.message
    assert "of 2,000 files searched: narrow path or glob" in result.message
    assert "repeats" not in result.message
    assert result.value["truncated"] is True


def test_include_and_exclude_globs_filter_the_listing(host_tree: Path) -> None:
    section = vfs(host_tree, include_glob=("src/**",), exclude_glob=("**/util.py",))

    assert vfs_paths(section) == {"/src/pkg/app.py"}


def test_reads_past_the_mount_budget_are_answered_but_not_kept(host_tree: Path) -> None:
    section = vfs(host_tree, max_bytes=60)

    first = call(section, "vfs_read_file", path="/src/pkg/app.py")
    second = call(section, "vfs_read_file", path="/README.md")

    assert first.success and "not kept" not in first.message
    assert second.success and "not kept" in second.message
    assert [copy.path for copy in section.session.select_all(VfsHostCopy)] == ["/src/pkg/app.py"]


def test_missing_host_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="cannot be opened"):
        vfs(tmp_path / "missing")


def test_overlapping_mounts_are_refused(host_tree: Path, tmp_path: Path) -> None:
    with pytest.raises(PromptValidationError, match="overlap"):
        VfsWorkspaceSection(
            session=Session(),
            mounts=[HostMount(host_tree, mount_path="/"), HostMount(tmp_path, mount_path="/docs")],
        )


def test_mount_path_with_parent_escape_is_refused(host_tree: Path) -> None:
    with pytest.raises(PromptValidationError, match="mount_path"):
        HostMount(host_tree, mount_path="../outside")


def test_two_mounts_are_both_reachable(host_tree: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("guide\n")
    section = VfsWorkspaceSection(
        session=Session(),
        mounts=[HostMount(host_tree, mount_path="/repo"), HostMount(docs, mount_path="/docs")],
    )

    assert call(section, "vfs_read_file", path="/docs/guide.md").success
    assert call(section, "vfs_read_file", path="/repo/README.md").success
    assert call(section, "vfs_list_directory", path="/").value["entries"] == ["docs/", "repo/"]


@pytest.mark.parametrize("value", [None, "session"])
def test_construction_requires_a_session(host_tree: Path, value: object) -> None:
    with pytest.raises(TypeError, match="Session"):
        VfsWorkspaceSection(session=value, mounts=[HostMount(host_tree)])  # type: ignore[arg-type]


@pytest.mark.parametrize("changes", [{}, {"session": None}])
def test_clone_requires_a_session(host_tree: Path, changes: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="requires session"):
        vfs(host_tree).clone(**changes)


def test_clone_lists_the_mounts_in_the_new_session(host_tree: Path) -> None:
    original = vfs(host_tree)
    call(original, "vfs_write_file", path="/scratch.txt", content="only in the original\n")
    other = Session()

    clone = original.clone(session=other)

    assert clone.session is other
    assert clone.mounts == original.mounts
    assert (clone.title, clone.key) == (original.title, original.key)
    assert call(clone, "vfs_read_file", path="/README.md").success
    assert not call(clone, "vfs_read_file", path="/scratch.txt").success
    assert call(original, "vfs_read_file", path="/scratch.txt").success


def test_section_on_a_cloned_session_keeps_the_model_writes(host_tree: Path) -> None:
    original = vfs(host_tree)
    call(original, "vfs_write_file", path="/scratch.txt", content="kept\n")

    clone = original.clone(session=original.session.clone())

    assert call(clone, "vfs_read_file", path="/scratch.txt").success


def test_tools_are_the_five_vfs_tools(host_tree: Path) -> None:
    assert [tool.name for tool in vfs(host_tree).tools] == [
        "vfs_list_directory",
        "vfs_read_file",
        "vfs_glob",
        "vfs_grep",
        "vfs_write_file",
    ]


def test_tool_context_deadline_bounds_grep(host_tree: Path) -> None:
    from dataclasses import replace

    tool = tool_named(vfs(host_tree), "vfs_grep")
    expired = replace(CONTEXT, deadline=0.0)

    result = tool.run(tool.parse_arguments({"pattern": "hi"}), expired)

    assert not result.success
    assert "stopped" in result.message


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.py", "app.py", True),
        ("**/*.py", "src/pkg/app.py", True),
        ("src/**", "src/pkg/app.py", True),
        ("src/**/app.py", "src/app.py", True),
        ("*.py", "src/app.py", False),
        ("src/*.py", "src/pkg/app.py", False),
        ("src/?pp.py", "src/app.py", True),
        ("[!a]pp.py", "app.py", False),
        ("**/**/test_*.py", "tests/unit/test_x.py", True),
    ],
)
def test_path_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert PathGlob.compile(pattern).matches(path) is expected


def test_glob_with_many_wildcards_still_answers() -> None:
    # A backtracking translation would take exponential time on this pair.
    glob = PathGlob.compile("*a" * 40 + "b")

    assert glob.matches("a" * 200) is False
    assert glob.matches("a" * 60 + "b") is True


def test_a_restored_session_keeps_the_writes_without_warning_about_the_listing(
    host_tree: Path, tmp_path: Path
) -> None:
    session = Session(session_id="vfs-stored")
    with SessionStore(tmp_path / "state") as store, store.attach(session, host_tree):
        with capture_logs() as logs:
            section = VfsWorkspaceSection(session=session, mounts=[HostMount(host_tree)])
            written = call(section, "vfs_write_file", path="/notes.md", content="plan")
        loaded = store.load(host_tree, "vfs-stored")
    assert written.success
    assert not [log for log in logs if log["event"] == "session_slice_not_persisted"]
    assert loaded.select_all(VfsFile) == (VfsFile(path="/notes.md", content="plan"),)
    restored = VfsWorkspaceSection(session=loaded, mounts=[HostMount(host_tree)])
    assert "plan" in call(restored, "vfs_read_file", path="/notes.md").message
    assert call(restored, "vfs_read_file", path="/README.md").success
