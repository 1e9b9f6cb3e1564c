"""A writer killed mid-write leaves a temp file named with its pid; the next writer removes it."""

import os
import signal
from pathlib import Path

from promptkit import Prompt
from promptkit.overrides import LocalPromptOverridesStore

from ..stuck_writer import start_stuck_writer
from .conftest import stored


def _written_file(store: LocalPromptOverridesStore, prompt: Prompt[None]) -> Path:
    store.set_section_override(prompt, path="intro", body="Before.")
    return store.prompt_file("reviewer", "code-review")


def _temp_files(file: Path) -> list[str]:
    return sorted(p.name for p in file.parent.iterdir() if p.name.endswith(".tmp"))


def test_temp_files_of_a_killed_writer_are_removed_by_the_next_write(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    file = _written_file(store, prompt)
    writer = start_stuck_writer(tmp_path, file)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    [left] = _temp_files(file)
    assert left.startswith(f".latest.toml.{writer.pid}.")

    store.set_section_override(prompt, path="intro/tone", body="After.")

    assert _temp_files(file) == []
    assert stored(store, prompt).sections[("intro",)].body == "Before."


def test_the_temp_file_of_a_writer_still_running_is_left_alone(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    file = _written_file(store, prompt)
    writer = start_stuck_writer(tmp_path, file)
    try:
        store.set_section_override(prompt, path="intro/tone", body="After.")

        assert len(_temp_files(file)) == 1
    finally:
        writer.kill()
        writer.wait()
