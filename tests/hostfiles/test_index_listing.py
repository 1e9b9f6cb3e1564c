"""The git listing takes what the index vouches for and stats the rest; globs applied after a
listing select exactly what a listing with those globs selects."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from promptkit.hostfiles import PathGlob, begin_selection, is_credential_file_name, select_files
from promptkit.hostfiles._exclusions import could_be_left_out_by_name, has_binary_suffix
from promptkit.hostfiles._git_index import vouched_entries
from promptkit.hostfiles._globs import PathFilter

GitRunner = Callable[..., str]
Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]


def test_a_clean_tracked_file_is_listed_with_its_size_on_disk(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "src/app.py", "print('hi')\n" * 7)
    commit(repo)
    (file,) = select_files(repo).files
    assert (file.path, file.size) == ("src/app.py", (repo / "src/app.py").stat().st_size)


def test_an_empty_tracked_file_is_listed_with_size_zero(
    repo: Path, write: Writer, commit: Committer
) -> None:
    # git zeroes the cached size of racily clean entries, so a zero is checked on disk.
    write(repo, "pkg/__init__.py", "")
    commit(repo)
    assert [(file.path, file.size) for file in select_files(repo).files] == [("pkg/__init__.py", 0)]


def test_a_skip_worktree_file_missing_from_disk_is_left_out_as_missing(
    repo: Path, write: Writer, commit: Committer, git: GitRunner
) -> None:
    write(repo, "kept.txt", "kept\n")
    write(repo, "sparse.txt", "not checked out\n")
    commit(repo)
    git(repo, "update-index", "--skip-worktree", "sparse.txt")
    (repo / "sparse.txt").unlink()
    selection = select_files(repo)
    assert [file.path for file in selection.files] == ["kept.txt"]
    assert selection.skipped_count("missing") == 1


def test_an_assume_unchanged_file_edited_on_disk_is_listed_as_it_is_on_disk(
    repo: Path, write: Writer, commit: Committer, git: GitRunner
) -> None:
    write(repo, "config.txt", "short\n")
    commit(repo)
    git(repo, "update-index", "--assume-unchanged", "config.txt")
    write(repo, "config.txt", "a much longer text than before\n")
    (file,) = select_files(repo).files
    assert file.size == len("a much longer text than before\n")
    assert file.blob_id is not None  # git was told to trust the index for its content


def test_a_tracked_hard_link_that_git_reports_changed_is_left_out(
    repo: Path, write: Writer, commit: Committer, tmp_path: Path
) -> None:
    write(repo, "notes.txt", "tracked\n")
    commit(repo)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside, and longer than the tracked text\n")
    (repo / "notes.txt").unlink()
    os.link(outside, repo / "notes.txt")
    selection = select_files(repo)
    assert selection.files == ()
    assert selection.skipped_count("hard_link") == 1


def test_a_listing_begun_early_gives_the_selection_select_files_gives(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "a.py", "a\n")
    commit(repo)
    write(repo, "b.md", "untracked\n")
    pending = begin_selection(repo)
    assert pending.result() == select_files(repo)


def test_index_output_that_does_not_parse_vouches_for_nothing() -> None:
    assert vouched_entries(b"H 100644 not-an-object-id 0\tfile.txt\0  garbage\n") is None


# -- globs applied after listing ---------------------------------------------------------------


def _tree(root: Path) -> None:
    for relative, content in {
        "src/app.py": "x\n",
        "src/vendor/lib.py": "x\n",
        "src/vendor/deep/more.py": "x\n",
        "docs/guide.md": "x\n",
        "docs/.env": "TOKEN=x\n",
        "build/out.txt": "x\n",
        "build/logo.png": "x\n",
        "top.txt": "x\n",
        "tests/fixtures/key.pem": "x\n",
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    os.mkfifo(root / "src" / "pipe")
    (root / "docs" / "outside").symlink_to("/etc/passwd")


GLOBS = st.lists(
    st.sampled_from(
        ["src", "src/**", "**/*.py", "docs/*", "build", "**/vendor", "*.txt", "tests/**/*.pem"]
    ),
    max_size=2,
)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(include=GLOBS, exclude=GLOBS)
def test_narrowing_a_listing_selects_what_listing_with_the_globs_selects(
    tmp_path_factory: pytest.TempPathFactory,
    git: GitRunner,
    in_git: bool,
    include: list[str],
    exclude: list[str],
) -> None:
    root = tmp_path_factory.mktemp("tree")
    _tree(root)
    if in_git:
        # Most files tracked (vouched for by the index), some not.
        git(root, "init", "-q")
        git(root, "add", "src", "docs", "tests")
        git(root, "commit", "-q", "-m", "tree")
    narrowed = select_files(root).narrowed(include, exclude)
    assert narrowed == select_files(root, include=include, exclude=exclude)


PATHS = st.lists(
    st.sampled_from(["a", "b", "src", "vendor", "x.py", "y.md", "deep"]), min_size=1, max_size=5
).map("/".join)
PATTERNS = st.sampled_from(["a", "src/**", "**/vendor", "**/*.py", "*/b", "a/**/x.py", "**"])


@given(path=PATHS, include=st.lists(PATTERNS, max_size=2), exclude=st.lists(PATTERNS, max_size=2))
def test_a_filter_allows_what_its_globs_say_whatever_it_saw_before(
    path: str, include: list[str], exclude: list[str]
) -> None:
    path_filter = PathFilter.of(include, exclude)
    path_filter.allows("a/b/x.py")  # folder verdicts remembered from another path
    parts = path.split("/")
    excluded = any(
        PathGlob.compile(glob).matches("/".join(parts[:depth]))
        for glob in exclude
        for depth in range(1, len(parts) + 1)
    )
    included = not include or any(PathGlob.compile(glob).matches(path) for glob in include)
    assert path_filter.allows(path) == (included and not excluded)


# -- names alone -------------------------------------------------------------------------------


@given(
    paths=st.lists(PATHS, max_size=12),
    include=st.lists(PATTERNS, max_size=2),
    exclude=st.lists(PATTERNS, max_size=2),
)
def test_a_filter_asked_about_many_paths_at_once_answers_as_asked_one_by_one(
    paths: list[str], include: list[str], exclude: list[str]
) -> None:
    one_by_one = [PathFilter.of(include, exclude).allows(path) for path in paths]

    assert PathFilter.of(include, exclude).allows_each(paths) == one_by_one


ODD_PATHS = st.tuples(st.sampled_from(["", "/", "./"]), PATHS, st.sampled_from(["", "/"])).map(
    "".join
)
PLAIN_PATHS = st.lists(
    st.sampled_from(["a", "b", "src", "vendor", "x.py", "deep", "ab"]), min_size=1, max_size=3
).map("/".join)
PLAIN_EXCLUDES = st.tuples(
    st.sampled_from(["", "./", "/"]), PLAIN_PATHS, st.sampled_from(["", "/"])
)


@given(
    paths=st.lists(st.one_of(PATHS, ODD_PATHS), max_size=12),
    exclude=st.lists(PLAIN_EXCLUDES.map("".join), min_size=1, max_size=2),
)
def test_a_filter_excluding_plain_paths_asked_about_many_paths_answers_as_asked_one_by_one(
    paths: list[str], exclude: list[str]
) -> None:
    one_by_one = [PathFilter.of((), exclude).allows(path) for path in paths]

    assert PathFilter.of((), exclude).allows_each(paths) == one_by_one


CREDENTIAL_SHAPES = (
    ".env.{}",
    "{}.pem",
    "{}.KEY",
    "id_rsa{}",
    "client_secret{}.json",
    "{}service-account{}.json",
    "{}.tfstate.{}",
    "Secrets.yml",
)
TEXT = st.text(alphabet="abcXYZ._-0123456789", max_size=8)


@given(shape=st.sampled_from(CREDENTIAL_SHAPES), filler=TEXT)
def test_a_name_of_a_credential_shape_is_a_credential_whatever_fills_it(
    shape: str, filler: str
) -> None:
    assert is_credential_file_name(shape.format(filler, filler))


@given(name=st.text(alphabet="abcxyz0123", min_size=1, max_size=12))
def test_a_plain_name_is_not_a_credential(name: str) -> None:
    assert not is_credential_file_name(name)


NAMES = st.one_of(
    st.builds(str.format, st.sampled_from(CREDENTIAL_SHAPES), TEXT, TEXT),
    st.builds("{}.{}".format, TEXT, st.sampled_from(["png", "PNG", "so", "py", "md", "bin"])),
    st.sampled_from(["bin", "png", "Makefile", ".npmrc", "credentials", "K\u212ay.pem"]),
    st.text(min_size=1, max_size=12).filter(lambda name: "/" not in name),
)


@given(names=st.lists(NAMES, max_size=20))
def test_every_name_a_name_rule_leaves_out_is_among_those_to_check(names: list[str]) -> None:
    to_check = could_be_left_out_by_name(names)

    left_out = {
        index
        for index, name in enumerate(names)
        if is_credential_file_name(name) or has_binary_suffix(name)
    }
    assert left_out <= to_check


def test_a_json_name_without_a_credential_word_is_not_among_those_to_check() -> None:
    # `*service-account*.json` asks for its middle, not for the ending every JSON file has.
    names = ["package.json", "tsconfig.json", "my-service-account-key.json"]

    assert could_be_left_out_by_name(names) == {2}
