"""Concurrent writers in many processes lose nothing, and a killed writer leaves a whole file."""

import signal
import subprocess
import sys
import threading
from pathlib import Path

from promptkit import Prompt, TextSection
from promptkit.overrides import LocalPromptOverridesStore

SECTION_COUNT = 800

STRESS_PROMPT = f"""
from promptkit import Prompt, TextSection

PROMPT = Prompt(
    ns="stress",
    key="many",
    sections=tuple(
        TextSection(title=f"Part {{i}}", key=f"part-{{i}}", text=f"default {{i}}")
        for i in range({SECTION_COUNT})
    ),
)
"""

WRITER = """
import logging
import sys

import structlog

from stress_prompt import PROMPT
from promptkit.overrides import LocalPromptOverridesStore

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
root, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = LocalPromptOverridesStore(root)
for number in range(first, first + count):
    store.set_section_override(PROMPT, path=f"part-{number}", body=f"body {number}\\nsecond line")
    print(number, flush=True)
"""


def _stress_prompt() -> Prompt[None]:
    return Prompt(
        ns="stress",
        key="many",
        sections=tuple(
            TextSection(title=f"Part {i}", key=f"part-{i}", text=f"default {i}")
            for i in range(SECTION_COUNT)
        ),
    )


def _write_scripts(folder: Path) -> Path:
    (folder / "stress_prompt.py").write_text(STRESS_PROMPT, encoding="utf-8")
    writer = folder / "writer.py"
    writer.write_text(WRITER, encoding="utf-8")
    return writer


def _bodies(root: Path) -> dict[str, str]:
    stored = LocalPromptOverridesStore(root).resolve(_stress_prompt().descriptor)
    assert stored is not None
    return {"/".join(path): entry.body for path, entry in stored.sections.items()}


def test_sixteen_processes_writing_fifty_sections_each_to_one_file_lose_none(
    tmp_path: Path,
) -> None:
    writer = _write_scripts(tmp_path)
    root = tmp_path / "overrides"
    processes = [
        subprocess.Popen(
            [sys.executable, str(writer), str(root), str(worker * 50), "50"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(16)
    ]
    errors = [process.communicate(timeout=240)[1] for process in processes]

    assert [process.returncode for process in processes] == [0] * 16, errors
    bodies = _bodies(root)
    assert len(bodies) == SECTION_COUNT
    assert all(bodies[f"part-{n}"] == f"body {n}\nsecond line" for n in range(SECTION_COUNT))


def test_writer_killed_mid_loop_leaves_a_parseable_file_with_every_completed_entry(
    tmp_path: Path,
) -> None:
    writer = _write_scripts(tmp_path)
    root = tmp_path / "overrides"
    process = subprocess.Popen(
        [sys.executable, str(writer), str(root), "0", str(SECTION_COUNT)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    completed = [int(process.stdout.readline()) for _ in range(60)]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)

    bodies = _bodies(root)

    assert process.returncode == -signal.SIGKILL
    assert len(bodies) < SECTION_COUNT
    assert all(bodies[f"part-{n}"] == f"body {n}\nsecond line" for n in completed)
    assert len(LocalPromptOverridesStore(root).list_overrides()) == 1


def test_threads_sharing_one_store_lose_no_write(tmp_path: Path) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    prompt = _stress_prompt()

    def write(first: int) -> None:
        for number in range(first, first + 10):
            store.set_section_override(prompt, path=f"part-{number}", body=f"body {number}")

    threads = [threading.Thread(target=write, args=(worker * 10,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(_bodies(tmp_path / "overrides")) == 80
