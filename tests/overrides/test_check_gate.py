"""`promptkit overrides check` as the CI gate, run as a real process the way CI runs it."""

import json
from pathlib import Path

import pytest

from ..conftest import run_promptkit
from .conftest import write_prompt_module

REF = "review_prompts:PROMPT"
FAKE_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_prompt_module(tmp_path)
    return tmp_path


def _file(project: Path) -> Path:
    return project / "overrides" / "reviewer" / "code-review" / "latest.toml"


def _set_intro(project: Path, body: str) -> None:
    result = run_promptkit(
        "overrides", "set", "--prompt", REF, "--path", "intro", "--body", body, cwd=project
    )
    assert result.returncode == 0, result.stderr


def _list_prompts_in_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\n\n[tool.promptkit]\nprompts = ["{REF}"]\n', encoding="utf-8"
    )


def test_check_fails_on_a_credential_typed_by_hand_into_a_body(project: Path) -> None:
    _set_intro(project, "Intro.\nSecond line.\n")
    file = _file(project)
    file.write_text(file.read_text().replace("Intro.", f"Use {FAKE_KEY}."), encoding="utf-8")
    line = file.read_text().splitlines().index(f"Use {FAKE_KEY}.") + 1

    result = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)

    assert result.returncode == 1
    assert f"latest.toml line {line}: looks like a credential (aws-access-key-id" in result.stdout
    assert FAKE_KEY not in result.stdout + result.stderr


def test_check_finds_a_stale_entry_through_pyproject_toml(project: Path) -> None:
    _list_prompts_in_pyproject(project)
    _set_intro(project, "Intro.")
    write_prompt_module(project, intro="The intro after a code change.")

    result = run_promptkit("overrides", "check", cwd=project)

    assert result.returncode == 1
    [problem] = result.stdout.splitlines()[:-1]
    assert 'line 9: sections."intro": stale' in problem


def test_check_reports_a_malformed_shared_file_with_its_line(project: Path) -> None:
    shared = project / "overrides" / "_shared" / "workspace-digest" / "latest.toml"
    shared.parent.mkdir(parents=True)
    shared.write_text(
        'version = 1\nsection_key = "workspace-digest"\ntag = "latest"\nbody = """\nunclosed\n',
        encoding="utf-8",
    )

    result = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)

    assert result.returncode == 1
    assert f"{Path('overrides/_shared/workspace-digest/latest.toml')} line 6: malformed TOML" in (
        result.stdout
    )


def test_check_reports_a_stale_shared_entry_at_its_hash_line(project: Path) -> None:
    shared = project / "overrides" / "_shared" / "intro" / "latest.toml"
    shared.parent.mkdir(parents=True)
    shared.write_text(
        'version = 1\nsection_key = "intro"\ntag = "latest"\n'
        f'expected_hash = "{"0" * 64}"\nupdated_at = 2026-01-01T00:00:00Z\n'
        'source = "operator"\nbody = "Shared intro."\n',
        encoding="utf-8",
    )

    result = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)

    assert result.returncode == 1
    assert "latest.toml line 4: shared intro (used by reviewer/code-review intro): stale" in (
        result.stdout
    )


def test_check_with_nothing_to_check_against_says_so_and_fails(project: Path) -> None:
    _set_intro(project, "Intro.")

    result = run_promptkit("overrides", "check", cwd=project)

    assert result.returncode == 1
    assert "nothing to check the entries against" in result.stderr
    assert "prompt reviewer/code-review was not found" in result.stdout


def test_check_syntax_only_passes_valid_files_without_prompts(project: Path) -> None:
    _set_intro(project, "Intro.")

    result = run_promptkit("overrides", "check", "--syntax-only", cwd=project)

    assert result.returncode == 0, result.stdout
    assert "0 problem(s) in 1 file(s)" in result.stdout


def test_check_json_lists_each_problem_with_file_and_line(project: Path) -> None:
    _list_prompts_in_pyproject(project)
    _set_intro(project, "Intro.")
    write_prompt_module(project, intro="The intro after a code change.")

    result = run_promptkit("overrides", "check", "--json", cwd=project)

    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert document["ok"] is False
    assert document["prompts"] == ["reviewer/code-review"]
    [problem] = document["problems"]
    assert problem["file"] == str(Path("overrides/reviewer/code-review/latest.toml"))
    assert (problem["line"], problem["kind"]) == (9, "entry")
    assert problem["entry"]["status"] == "stale"


def test_check_fix_records_a_hand_edit_as_the_operators(project: Path) -> None:
    result = run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)
    assert result.returncode == 0, result.stderr
    file = _file(project)
    file.write_text(file.read_text().replace("Be kind and specific.", "Be direct."))

    noted = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)
    fixed = run_promptkit("overrides", "check", "--prompt", REF, "--fix", cwd=project)

    assert noted.returncode == 0 and "edited by hand" in noted.stderr
    assert fixed.returncode == 0 and "recorded" in fixed.stderr
    tone = file.read_text().split('[sections."intro/tone"]')[1].split("\n[")[0]
    assert 'source = "operator"' in tone
