"""examples/triage_eval.py runs the whole evaluation workflow offline, as a user runs it."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_triage_example_evaluates_compares_and_promotes(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "triage_eval.py"), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )

    assert completed.returncode == 0, completed.stderr
    assert "latest: mean score 0.88\ncandidate: mean score 1.00\n" in completed.stdout
    assert "improved: refund-policy\nregressed: none\n" in completed.stdout
    assert json.loads((tmp_path / "manifest.json").read_text())["outcome"] == "success"
    promoted = tmp_path / "overrides" / "examples" / "triage" / "latest.toml"
    assert tomllib.loads(promoted.read_text())["promotion"]["scores"]["candidate"] == 1.0
