"""A process stopped in the middle of `write_atomically`, for tests of what a killed writer
leaves behind: it has written part of the temp file and waits until it is killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import sys
import time
from pathlib import Path

from promptkit._durable import write_atomically


def chunks():
    yield b"half of a new file"
    print("writing", flush=True)
    time.sleep(600)
    yield b"never"


write_atomically(Path(sys.argv[1]), chunks())
"""


def start_stuck_writer(tmp_path: Path, file: Path) -> subprocess.Popen[str]:
    """A writer replacing `file`, returned once its temp file holds part of the new content."""
    script = tmp_path / "stuck_writer.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    writer = subprocess.Popen(
        [sys.executable, str(script), str(file)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "writing\n"
    return writer
