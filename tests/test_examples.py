"""The programs in examples/ run as a user would run them, in a fresh process."""

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_hello_prompt_prints_a_rendered_prompt(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "hello_prompt.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("## 1. Role\n\n")
    assert "\n## 2. Task\n\nExplain workspace digests to new contributors" in completed.stdout
    assert "\n## 3. Response Format\n\n" in completed.stdout
    assert "tools: glossary_lookup" in completed.stdout
