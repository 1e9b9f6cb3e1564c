"""The VFS overlay: listing without reading, reads on demand, consistency, writes kept apart."""

from pathlib import Path

import pytest

from promptkit.errors import ArgumentValueError
from promptkit.hostfiles import FileSelection, ListingSummary, select_files
from promptkit.prompt import Prompt
from promptkit.session import Session
from promptkit.workspace import (
    HostMount,
    VfsWorkspaceSection,
    record_counted_listing,
    record_listing,
)
from promptkit.workspace._vfs import relist_mounts

from .conftest import CountingReader, call, snapshot_tree


def section_over(root: Path, reader: CountingReader | None = None) -> VfsWorkspaceSection:
    if reader is None:
        return VfsWorkspaceSection(session=Session(), mounts=[HostMount(root)])
    return VfsWorkspaceSection(session=Session(), mounts=[HostMount(root)], reader=reader)


def test_a_20000_file_tree_opens_lists_and_globs_without_reading_a_file(tmp_path: Path) -> None:
    for directory in range(100):
        folder = tmp_path / f"pkg{directory}"
        folder.mkdir()
        for index in range(200):
            (folder / f"mod{index}.py").write_text("x = 1\n")
    reader = CountingReader()
    section = section_over(tmp_path, reader)

    text = Prompt(ns="tests", key="big", sections=(section,)).render().text
    listed = call(section, "vfs_list_directory", path="/pkg7")
    found = call(section, "vfs_glob", pattern="**/mod19*.py")

    assert "- `/`: 20,000 files" in text or "- `/`: 20000 files" in text
    assert listed.success and found.success
    assert reader.reads == []
    assert call(section, "vfs_read_file", path="/pkg7/mod3.py").success
    assert reader.reads == ["pkg7/mod3.py"]


def test_a_read_after_listing_sees_the_host_file_as_it_is_then(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("first\n")
    section = section_over(tmp_path)
    call(section, "vfs_list_directory", path="/")

    (tmp_path / "notes.md").write_text("edited after listing\n")

    assert "edited after listing" in call(section, "vfs_read_file", path="/notes.md").message


def test_a_file_once_read_reads_the_same_for_the_rest_of_the_session(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("first\n")
    reader = CountingReader()
    section = section_over(tmp_path, reader)
    call(section, "vfs_read_file", path="/notes.md")

    (tmp_path / "notes.md").write_text("changed on the host\n")

    assert "first" in call(section, "vfs_read_file", path="/notes.md").message
    assert reader.reads == ["notes.md"]


def test_a_host_file_created_after_listing_appears_only_after_relisting(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    section = section_over(tmp_path)
    call(section, "vfs_list_directory", path="/")
    (tmp_path / "new.txt").write_text("new\n")

    before = call(section, "vfs_read_file", path="/new.txt")
    relist_mounts(section.session, section.mounts)
    after = call(section, "vfs_read_file", path="/new.txt")

    assert not before.success and "no file /new.txt" in before.message
    assert after.success and "new" in after.message


def test_relisting_drops_read_copies_and_keeps_the_models_writes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("before\n")
    section = section_over(tmp_path)
    call(section, "vfs_read_file", path="/a.txt")
    call(section, "vfs_write_file", path="/plan.md", content="my plan\n")
    (tmp_path / "a.txt").write_text("after\n")

    relist_mounts(section.session, section.mounts)

    assert "after" in call(section, "vfs_read_file", path="/a.txt").message
    assert "my plan" in call(section, "vfs_read_file", path="/plan.md").message


def test_writes_shadow_host_files_and_never_touch_the_host(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('host')\n")
    before = snapshot_tree(tmp_path)
    section = section_over(tmp_path)

    call(section, "vfs_write_file", path="/app.py", content="print('overlay')\n")
    call(section, "vfs_write_file", path="/app.py", content="# more\n", mode="append")

    shown = call(section, "vfs_read_file", path="/app.py").message
    assert "print('overlay')" in shown and "# more" in shown
    assert snapshot_tree(tmp_path) == before
    assert (tmp_path / "app.py").read_text() == "print('host')\n"


def test_writes_under_a_mount_are_bounded_by_its_max_bytes(tmp_path: Path) -> None:
    section = VfsWorkspaceSection(
        session=Session(), mounts=[HostMount(tmp_path, max_bytes=100, max_file_bytes=100)]
    )

    first = call(section, "vfs_write_file", path="/a.txt", content="x" * 80)
    refused = call(section, "vfs_write_file", path="/b.txt", content="y" * 30)
    rewritten = call(section, "vfs_write_file", path="/a.txt", content="z" * 90)

    assert first.success and rewritten.success
    assert not refused.success
    assert "over the mount's max_bytes of 100" in refused.message
    assert not (tmp_path / "a.txt").exists()


def test_grep_searches_writes_in_place_of_the_host_file(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("needle on the host\n")
    section = section_over(tmp_path)
    call(section, "vfs_write_file", path="/app.py", content="only hay now\n")

    result = call(section, "vfs_grep", pattern="needle|hay")

    assert result.message.splitlines() == ["/app.py:1: only hay now"]


def test_grep_stops_reading_files_once_it_has_its_matches(tmp_path: Path) -> None:
    for index in range(300):
        (tmp_path / f"f{index:03}.txt").write_text("match me\n" * 2000)
    reader = CountingReader()
    section = section_over(tmp_path, reader)

    result = call(section, "vfs_grep", pattern="match", max_matches=5)

    assert result.success and result.value["truncated"] is True
    # The pipe holds a few files ahead of the search; nowhere near all 300 are read.
    assert len(reader.reads) < 100


def test_grep_does_not_keep_what_it_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    reader = CountingReader()
    section = section_over(tmp_path, reader)

    call(section, "vfs_grep", pattern="needle")
    (tmp_path / "a.txt").write_text("edited\n")

    assert "edited" in call(section, "vfs_read_file", path="/a.txt").message


def test_nothing_is_listed_until_the_section_is_used(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    section = section_over(tmp_path)

    assert section.overlay.recorded_listing(section.mounts[0]) is None
    call(section, "vfs_list_directory", path="/")
    listing = section.overlay.recorded_listing(section.mounts[0])
    assert listing is not None and listing.file_count == 1


def test_a_mount_moved_to_another_directory_is_listed_again(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for root, name in ((first, "a.txt"), (second, "b.txt")):
        root.mkdir()
        (root / name).write_text("x\n")
    session = Session()
    VfsWorkspaceSection(session=session, mounts=[HostMount(first)]).mounts_description()

    moved = VfsWorkspaceSection(session=session, mounts=[HostMount(second)])

    assert call(moved, "vfs_read_file", path="/b.txt").success
    assert not call(moved, "vfs_read_file", path="/a.txt").success
    assert Path(moved.overlay.listing(moved.mounts[0]).host_path).samefile(second)


def test_a_listing_taken_once_is_recorded_with_the_mounts_globs_and_not_taken_again(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "lib.py").write_text("x\n")
    mount = HostMount(tmp_path, exclude_glob=("vendor",))
    section = VfsWorkspaceSection(session=Session(), mounts=[mount])
    record_listing(section.session, mount, select_files(tmp_path))
    (tmp_path / "src" / "new.py").write_text("created after the listing\n")

    listed = call(section, "vfs_glob", pattern="**/*.py")

    assert listed.message.split() == ["/src/app.py"]


def test_a_listing_of_another_size_cap_is_not_recorded_for_a_mount(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    mount = HostMount(tmp_path, max_file_bytes=10)
    with pytest.raises(ArgumentValueError, match="is not a listing of the mount"):
        record_listing(Session(), mount, select_files(tmp_path))


def _summary_of(selection: FileSelection) -> ListingSummary:
    return ListingSummary(
        root=selection.root,
        from_git=selection.from_git,
        max_file_bytes=selection.max_file_bytes,
        file_count=len(selection.files),
        total_bytes=selection.total_bytes,
        skipped=selection.skipped,
    )


def test_a_listing_recorded_from_counts_loads_its_files_when_a_tool_first_needs_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "lib.py").write_text("y = 2\n")
    mount = HostMount(tmp_path, exclude_glob=("vendor",))
    section = VfsWorkspaceSection(session=Session(), mounts=[mount])
    loads: list[FileSelection] = []

    def load() -> FileSelection:
        loads.append(select_files(tmp_path))
        return loads[-1]

    counted = select_files(tmp_path, exclude=["vendor"])
    record_counted_listing(section.session, mount, _summary_of(counted), load)
    text = Prompt(ns="tests", key="counted", sections=(section,)).render().text
    assert "- `/`: 1 file" in text
    assert loads == []

    found = call(section, "vfs_glob", pattern="**/*.py")
    call(section, "vfs_read_file", path="/src/app.py")

    assert found.message.split() == ["/src/app.py"]
    assert len(loads) == 1


def test_a_counted_listing_of_another_directory_is_not_recorded_for_a_mount(
    tmp_path: Path,
) -> None:
    (tmp_path / "other").mkdir()
    mount = HostMount(tmp_path / "other")
    with pytest.raises(ArgumentValueError, match="is not a listing of the mount"):
        record_counted_listing(
            Session(), mount, _summary_of(select_files(tmp_path)), lambda: select_files(tmp_path)
        )


def test_a_counted_listing_of_another_size_cap_is_not_recorded_for_a_mount(
    tmp_path: Path,
) -> None:
    mount = HostMount(tmp_path, max_file_bytes=10)
    with pytest.raises(ArgumentValueError, match="is not a listing of the mount"):
        record_counted_listing(
            Session(), mount, _summary_of(select_files(tmp_path)), lambda: select_files(tmp_path)
        )
