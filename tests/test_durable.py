"""promptkit._durable.write_atomically: whole replacement, permissions, no leftovers."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from promptkit._durable import write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_bytes_and_chunks_are_written_exactly(tmp_path: Path) -> None:
    write_atomically(tmp_path / "a.txt", "héllo\n")
    write_atomically(tmp_path / "b.bin", b"\x00\x01")
    write_atomically(tmp_path / "c.jsonl", [b"one\n", b"two\n"])

    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "c.jsonl").read_bytes() == b"one\ntwo\n"


def test_missing_parent_directories_are_created(tmp_path: Path) -> None:
    target = tmp_path / "run" / "deep" / "manifest.json"

    assert write_atomically(target, "{}") == target
    assert target.read_text() == "{}"


def test_a_new_file_is_readable_by_others(tmp_path: Path) -> None:
    target = write_atomically(tmp_path / "new.txt", "x")

    assert _mode(target) == 0o644


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "kept.txt"
    target.write_text("old")
    target.chmod(0o600)

    write_atomically(target, "new")

    assert (target.read_text(), _mode(target)) == ("new", 0o600)


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    target.write_text("old\n")

    def chunks() -> object:
        yield b"partial\n"
        raise RuntimeError("producer failed")

    with pytest.raises(RuntimeError, match="producer failed"):
        write_atomically(target, chunks())  # type: ignore[arg-type]

    assert target.read_text() == "old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data.jsonl"]
