"""A writer killed mid-write leaves a temp file named with its pid; the next writer removes it."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from promptkit import Prompt
from promptkit.overrides import LocalPromptOverridesStore

from .conftest import stored

STUCK_WRITER = """
import sys
import time
from pathlib import Path

from promptkit.durable import write_atomically


def chunks():
    yield b"half of a new file"
    print("writing", flush=True)
    time.sleep(600)
    yield b"never"


write_atomically(Path(sys.argv[1]), chunks())
"""


def _start_stuck_writer(tmp_path: Path, file: Path) -> subprocess.Popen[str]:
    script = tmp_path / "stuck_writer.py"
    script.write_text(STUCK_WRITER, encoding="utf-8")
    writer = subprocess.Popen(
        [sys.executable, str(script), str(file)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "writing\n"
    return writer


def _written_file(store: LocalPromptOverridesStore, prompt: Prompt[None]) -> Path:
    store.set_section_override(prompt, path="intro", body="Before.")
    return store.prompt_file("reviewer", "code-review")


def _temp_files(file: Path) -> list[str]:
    return sorted(p.name for p in file.parent.iterdir() if p.name.endswith(".tmp"))


def test_temp_files_of_a_killed_writer_are_removed_by_the_next_write(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    file = _written_file(store, prompt)
    writer = _start_stuck_writer(tmp_path, file)
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
    writer = _start_stuck_writer(tmp_path, file)
    try:
        store.set_section_override(prompt, path="intro/tone", body="After.")

        assert len(_temp_files(file)) == 1
    finally:
        writer.kill()
        writer.wait()
