"""`promptkit overrides ...` run as a real process, the way an operator or CI runs it."""

import os
import zipfile
from pathlib import Path

import pytest

from promptkit.overrides import LocalPromptOverridesStore

from ..conftest import run_promptkit
from .conftest import editor_env, review_prompt, section_hash, stored, write_prompt_module

REF = "review_prompts:PROMPT"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_prompt_module(tmp_path)
    return tmp_path


def _file(project: Path, tag: str = "latest") -> Path:
    return project / "overrides" / "reviewer" / "code-review" / f"{tag}.toml"


def _malformed_file_of_another_prompt(project: Path) -> Path:
    broken = project / "overrides" / "other" / "thing" / "latest.toml"
    broken.parent.mkdir(parents=True)
    broken.write_text('version = 1\nns = "other"\nprompt_key = "thing"\ntag = \n', encoding="utf-8")
    return broken


def test_check_exits_1_on_a_stale_file_and_0_after_set(project: Path) -> None:
    assert (
        run_promptkit(
            "overrides", "set", "--prompt", REF, "--path", "intro", "--body", "Old.", cwd=project
        ).returncode
        == 0
    )
    write_prompt_module(project, intro="The intro after a code change.")

    stale = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)
    assert stale.returncode == 1
    old_hash = section_hash(review_prompt(), "intro")
    new_hash = section_hash(review_prompt("The intro after a code change."), "intro")
    [problem] = [line for line in stale.stdout.splitlines() if "stale" in line]
    assert problem.startswith(f"{Path('overrides/reviewer/code-review/latest.toml')} line ")
    assert 'sections."intro"' in problem
    assert old_hash in problem and new_hash in problem

    assert (
        run_promptkit(
            "overrides", "set", "--prompt", REF, "--path", "intro", "--body", "New.", cwd=project
        ).returncode
        == 0
    )
    clean = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)
    assert clean.returncode == 0, clean.stdout
    assert "0 problem(s) in 1 file(s)" in clean.stdout


def test_check_reports_a_malformed_file_with_its_line_and_goes_on(project: Path) -> None:
    run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)
    _malformed_file_of_another_prompt(project)

    result = run_promptkit("overrides", "check", "--prompt", REF, cwd=project)

    assert result.returncode == 1
    assert f"{Path('overrides/other/thing/latest.toml')} line 4: malformed TOML" in result.stdout
    assert "1 problem(s) in 2 file(s)" in result.stdout


def test_check_reports_a_file_in_a_place_that_fits_no_prompt(project: Path) -> None:
    stray = project / "overrides" / "notes.toml"
    stray.parent.mkdir()
    stray.write_text("version = 1\n", encoding="utf-8")

    result = run_promptkit("overrides", "check", cwd=project)

    assert result.returncode == 1
    assert "not an override file; expected <ns>/<prompt_key>/<tag>.toml" in result.stdout


def test_check_of_a_folder_without_files_is_clean(project: Path) -> None:
    result = run_promptkit("overrides", "check", cwd=project)

    assert result.returncode == 0
    assert "0 problem(s) in 0 file(s)" in result.stdout


def test_list_shows_section_tool_and_stale_counts(project: Path) -> None:
    run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)
    write_prompt_module(project, intro="Changed.")

    result = run_promptkit("overrides", "list", "--prompt", REF, cwd=project)

    assert result.returncode == 0
    header, row = result.stdout.splitlines()
    assert header.split() == ["NS", "PROMPT", "TAG", "SECTIONS", "TOOLS", "STALE", "FILE"]
    assert row.split() == [
        "reviewer",
        "code-review",
        "latest",
        "3",
        "1",
        "1",
        str(Path("overrides/reviewer/code-review/latest.toml")),
    ]


def test_list_marks_a_malformed_file_invalid_lists_the_valid_ones_and_exits_1(
    project: Path,
) -> None:
    run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)
    _malformed_file_of_another_prompt(project)

    result = run_promptkit("overrides", "list", "--prompt", REF, cwd=project)

    assert result.returncode == 1
    _, invalid, valid = result.stdout.splitlines()
    assert invalid.split()[:7] == [
        "(invalid)",
        "-",
        "-",
        "-",
        "-",
        "-",
        str(Path("overrides/other/thing/latest.toml")),
    ]
    assert invalid.split()[7:10] == ["line", "4:", "malformed"]
    assert valid.split()[:3] == ["reviewer", "code-review", "latest"]
    assert "1 invalid override file(s)" in result.stderr


def test_show_and_diff_ignore_a_malformed_file_of_another_prompt(project: Path) -> None:
    run_promptkit(
        "overrides", "set", "--prompt", REF, "--path", "intro", "--body", "Hi.", cwd=project
    )
    _malformed_file_of_another_prompt(project)

    shown = run_promptkit("overrides", "show", "--prompt", REF, cwd=project)
    diffed = run_promptkit("overrides", "diff", "--prompt", REF, cwd=project)

    assert shown.returncode == 0, shown.stderr
    assert '[sections."intro"] applies' in shown.stdout
    assert diffed.returncode == 0, diffed.stderr
    assert "+Hi." in diffed.stdout


def test_show_of_a_prompt_whose_own_file_is_malformed_fails_naming_the_line(
    project: Path,
) -> None:
    _file(project).parent.mkdir(parents=True)
    _file(project).write_text("version = \n", encoding="utf-8")

    result = run_promptkit("overrides", "show", "--prompt", REF, cwd=project)

    assert result.returncode == 2
    assert f"{Path('overrides/reviewer/code-review/latest.toml')} line 1: malformed" in (
        result.stderr
    )


def test_seed_then_show_lists_each_entry_and_whether_it_applies(project: Path) -> None:
    seeded = run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)
    assert "seeded 3 section(s) and 1 tool(s)" in seeded.stdout

    shown = run_promptkit("overrides", "show", "--prompt", REF, cwd=project)

    assert shown.returncode == 0
    assert '[sections."intro/tone"] applies' in shown.stdout
    assert "    Be kind and specific." in shown.stdout
    assert '[tools."search"] applies' in shown.stdout
    assert "workspace-digest" not in shown.stdout


def test_set_from_a_file_stores_its_text(project: Path) -> None:
    (project / "tone.md").write_text("Be brief.\nBe exact.\n", encoding="utf-8")

    result = run_promptkit(
        "overrides",
        "set",
        "--prompt",
        REF,
        "--path",
        "intro/tone",
        "--from-file",
        "tone.md",
        cwd=project,
    )

    assert result.returncode == 0, result.stderr
    override = stored(LocalPromptOverridesStore(project / "overrides"), review_prompt())
    assert override.sections[("intro", "tone")].body == "Be brief.\nBe exact.\n"


def test_set_to_an_unknown_path_fails_with_a_clear_error_and_writes_nothing(
    project: Path,
) -> None:
    result = run_promptkit(
        "overrides", "set", "--prompt", REF, "--path", "nowhere", "--body", "x", cwd=project
    )

    assert result.returncode == 2
    assert "has no section at 'nowhere'" in result.stderr
    assert not (project / "overrides").exists()


def test_edit_opens_the_editor_on_the_current_text_and_stores_the_result(project: Path) -> None:
    env = editor_env(
        project,
        "draft = Path(sys.argv[1])\n"
        "draft.write_text(draft.read_text().upper() + '\\nEdited.\\n')\n",
    )

    result = run_promptkit(
        "overrides", "edit", "--prompt", REF, "--path", "intro/tone", cwd=project, env=env
    )

    assert result.returncode == 0, result.stderr
    override = stored(LocalPromptOverridesStore(project / "overrides"), review_prompt())
    assert override.sections[("intro", "tone")].body == "BE KIND AND SPECIFIC.\nEdited.\n"


def test_edit_that_adds_a_credential_is_refused_and_keeps_the_draft(project: Path) -> None:
    env = editor_env(project, "Path(sys.argv[1]).write_text('token ghp_' + 'a1B2c3D4e5' * 4)\n")

    result = run_promptkit(
        "overrides", "edit", "--prompt", REF, "--path", "intro", cwd=project, env=env
    )

    assert result.returncode == 2
    assert "github-token" in result.stderr
    assert "a1B2c3D4e5" not in result.stderr
    draft = Path(result.stderr.split("your text is kept in ")[1].split(")")[0])
    assert draft.read_text().startswith("token ghp_")
    draft.unlink()
    assert not _file(project).exists()


def test_diff_shows_a_unified_diff_of_default_and_override(project: Path) -> None:
    run_promptkit(
        "overrides",
        "set",
        "--prompt",
        REF,
        "--path",
        "intro/tone",
        "--body",
        "Be kind and exact.",
        cwd=project,
    )

    result = run_promptkit("overrides", "diff", "--prompt", REF, cwd=project)

    assert result.returncode == 0
    assert "--- default reviewer/code-review intro/tone" in result.stdout
    assert "-Be kind and specific." in result.stdout
    assert "+Be kind and exact." in result.stdout


def test_rm_of_one_path_keeps_the_other_entries(project: Path) -> None:
    run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)

    result = run_promptkit("overrides", "rm", "--prompt", REF, "--path", "intro", cwd=project)

    assert result.returncode == 0
    override = stored(LocalPromptOverridesStore(project / "overrides"), review_prompt())
    assert set(override.sections) == {("intro", "tone"), ("search",)}


def test_rm_of_the_whole_file_then_again_reports_nothing_to_remove(project: Path) -> None:
    run_promptkit("overrides", "seed", "--prompt", REF, cwd=project)

    assert run_promptkit("overrides", "rm", "--prompt", REF, cwd=project).returncode == 0
    again = run_promptkit("overrides", "rm", "--prompt", REF, cwd=project)

    assert not _file(project).exists()
    assert again.returncode == 1
    assert "nothing to remove" in again.stdout


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (":PROMPT", "expected package.module:attr"),
        ("review_prompts", "no prompt 'review_prompts' among the promptkit.prompts entry points"),
        ("no_such_module:PROMPT", "cannot import 'no_such_module'"),
        ("review_prompts:MISSING", "has no attribute 'MISSING'"),
        ("review_prompts:TaskParams", "not a Prompt or a function that returns one"),
    ],
)
def test_a_bad_prompt_reference_fails_with_a_clear_error(
    project: Path, reference: str, message: str
) -> None:
    result = run_promptkit("overrides", "show", "--prompt", reference, cwd=project)

    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


FACTORIES = """\
from review_prompts import PROMPT


def without_arguments():
    return PROMPT


def session_only(session):
    return PROMPT


def broken():
    raise RuntimeError("the settings file is missing")
"""


def test_check_accepts_a_factory_of_session_and_workspace(project: Path) -> None:
    workspace_prompt = "promptkit.discovery:workspace_prompt"
    seeded = run_promptkit("overrides", "seed", "--prompt", workspace_prompt, cwd=project)

    result = run_promptkit("overrides", "check", "--prompt", workspace_prompt, cwd=project)

    assert seeded.returncode == 0, seeded.stderr
    assert (project / "overrides" / "promptkit" / "workspace" / "latest.toml").is_file()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "overrides check: 0 problem(s) in 1 file(s)" in result.stdout
    assert "was not found" not in result.stderr


def test_a_factory_without_arguments_is_called(project: Path) -> None:
    (project / "factories.py").write_text(FACTORIES, encoding="utf-8")

    result = run_promptkit(
        "overrides", "show", "--prompt", "factories:without_arguments", cwd=project
    )

    assert result.returncode == 0, result.stderr
    assert "no overrides for reviewer/code-review tag latest" in result.stdout


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (
            "factories:session_only",
            "takes (session): a factory takes (session, workspace) or no arguments",
        ),
        (
            "factories:broken",
            "prompt factory factories:broken failed: RuntimeError: the settings file is missing",
        ),
    ],
)
def test_a_factory_that_cannot_give_a_prompt_fails_with_a_clear_error(
    project: Path, reference: str, message: str
) -> None:
    (project / "factories.py").write_text(FACTORIES, encoding="utf-8")

    result = run_promptkit("overrides", "check", "--prompt", reference, cwd=project)

    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_prompts_of_the_entry_point_group_are_found_by_name(project: Path) -> None:
    dist_info = project / "site" / "review_app-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: review-app\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[promptkit.prompts]\ncode-review = review_prompts:PROMPT\n", encoding="utf-8"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(project / "site"), os.environ.get("PYTHONPATH", "")]),
    }
    run_promptkit(
        "overrides",
        "set",
        "--prompt",
        "reviewer/code-review",
        "--path",
        "intro",
        "--body",
        "Hi.",
        cwd=project,
        env=env,
    )
    write_prompt_module(project, intro="Changed intro.")

    result = run_promptkit("overrides", "check", cwd=project, env=env)

    assert result.returncode == 1
    assert 'sections."intro": stale' in result.stdout


def test_prompts_of_a_distribution_in_a_zip_on_the_path_are_found_by_name(project: Path) -> None:
    archive = project / "review_app.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(
            "review_app-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: review-app\nVersion: 1.0\n",
        )
        bundle.writestr(
            "review_app-1.0.dist-info/entry_points.txt",
            "[promptkit.prompts]\ncode-review = review_prompts:PROMPT\n",
        )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(archive), os.environ.get("PYTHONPATH", "")]),
    }

    result = run_promptkit("overrides", "check", "--prompt", "code-review", cwd=project, env=env)

    assert result.returncode == 0, result.stderr
