"""The programs in examples/ run as a user would run them, in a fresh process."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

from .conftest import offline_env

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


def test_make_demo_runs_offline_and_prints_no_warning(tmp_path: Path) -> None:
    # The demo's commands as the Makefile has them, with its state in tmp_path (make -n prints
    # them without running; -o leaves the installed virtualenv alone).
    # Run under `make test`, the inner make would inherit the outer one's flags and level.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    listed = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-n",
            "-o",
            ".venv/.installed",
            "demo",
            "BIN=PROMPTKIT_BIN",
            f"DEMO_STATE={tmp_path}",
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    commands = [shlex.split(line) for line in listed.stdout.splitlines() if line.strip()]
    assert [command[:2] for command in commands] == [
        ["PROMPTKIT_BIN/promptkit", "optimize"],
        ["PROMPTKIT_BIN/promptkit", "render"],
    ]

    for command in commands:
        completed = subprocess.run(
            [sys.executable, "-m", "promptkit", *command[1:]],
            cwd=REPO_ROOT,
            env=offline_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        assert "warning" not in completed.stderr.lower(), completed.stderr
    assert "Workspace Digest" in completed.stdout
