"""The Layout part of the static digest: files, languages, folders and the files to know.

One line per notable folder (what it is for, or its named subfolders), the largest modules,
entry points, contributor docs and key configuration, agent skills and the rest of the top
level, each with a priority that says what the budget keeps first.
"""

from __future__ import annotations

from collections.abc import Sequence

from promptkit.repofacts._digest_text import DigestLine, code_span, count_of, plain
from promptkit.repofacts._scan import WorkspaceFacts
from promptkit.repofacts._tooling.model import one_line

__all__ = ["layout_lines"]

_SKIP_LABELS = {
    "binary": "binary",
    "credential": "credential",
    "hard_link": "hard links",
    "too_large": "too large",
    "symlink_outside_root": "symlinked outside the root",
    "symlinked_directory": "under a symlinked directory",
    "unreadable": "unreadable",
    "not_regular_file": "not regular files",
    "non_utf8_name": "with non-UTF-8 names",
    "missing": "deleted",
}
_MAX_CODE_LANGUAGES = 8
_MAX_OTHER_TYPES = 6
_NOTABLE_PER_LINE = 12
_MAX_ENTRY_POINTS = 12
_MAX_ROOT_FILES = 24
_MAX_PATHS_PER_LINE = 8
_MAX_INLINE_SUBFOLDERS = 4
_MAX_INNER_PURPOSE = 52
_MAX_DESCRIBED_SKILLS = 4
_MODULES_PER_LINE = 10
_CONVENTIONAL = frozenset(
    {"src", "lib", "test", "tests", "__tests__", "testdata", "resources", "benches", "examples"}
)


# One line per fact of the layout, each written only when the scan found it.
def layout_lines(facts: WorkspaceFacts) -> list[DigestLine]:  # noqa: C901
    lines = [DigestLine("Layout", 100, _files_summary(facts))]
    code = [language for language in facts.languages if language.is_code]
    other = [language for language in facts.languages if not language.is_code]
    if code:
        listed = ", ".join(f"{lang.language} {lang.files:,}" for lang in code[:_MAX_CODE_LANGUAGES])
        lines.append(DigestLine("Layout", 96, f"- Languages: {listed}"))
    lines.extend(_folders(facts))
    top_level = sum(1 for folder in facts.folders if folder.path.count("/") == 1)
    rest = facts.layout[top_level:]
    if rest:
        files = sum(directory.files for directory in rest)
        text = f"- {len(rest):,} more top-level directories with {count_of(files, 'file')}"
        lines.append(DigestLine("Layout", 60, text))
    if facts.largest_modules:
        listed = ", ".join(code_span(path) for path in facts.largest_modules)
        lines.append(DigestLine("Layout", 78, f"- Largest modules: {listed}"))
    # The next modules by size fill what room is left, after everything else.
    for start in range(0, len(facts.more_modules), _MODULES_PER_LINE):
        chunk = facts.more_modules[start : start + _MODULES_PER_LINE]
        listed = ", ".join(code_span(path) for path in chunk)
        priority = 34 - 3 * start // _MODULES_PER_LINE
        lines.append(DigestLine("Layout", priority, f"- More modules: {listed}", in_share=False))
    # What users import and where the big modules are tested: named after the folders and
    # the big modules, and before the room left over goes to catalogues' tails.
    lines.extend(_named("- Tests of the largest modules", facts.module_tests, 60))
    lines.extend(_named("- Package exports", facts.exported_modules, 60))
    lines.extend(_named("- Re-exported by entry points", facts.reexported_modules, 60))
    if facts.entry_points:
        listed = _bounded(facts.entry_points, _MAX_ENTRY_POINTS)
        lines.append(DigestLine("Layout", 66, f"- Entry points: {listed}"))
    # The key files are what maintainers name most: in lines of a few, so the budget can keep
    # the top level's and drop the deeper ones.
    lines.extend(_catalogue("- Docs and config", facts.notable_files, 88, _NOTABLE_PER_LINE))
    lines.extend(_catalogue("- Contributor docs", facts.contributor_docs, 86))
    lines.extend(_named_by_docs(facts))
    lines.extend(_catalogue("- Build logic", facts.build_logic, 80))
    lines.extend(_docs_and_tests(facts))
    if facts.generated_folders:
        listed = ", ".join(code_span(path) for path in facts.generated_folders)
        lines.append(
            DigestLine("Layout", 80, f"- Generated code (regenerate, do not edit): {listed}")
        )
    # The first few skills say what they are for; the rest are named, so many skills do not
    # crowd out the layout. An agent reads a skill's description from its front matter itself,
    # so naming every skill matters more than describing the first ones.
    for rank, skill in enumerate(facts.skills[:_MAX_DESCRIBED_SKILLS]):
        about = f": {plain(skill.description)}" if skill.description else ""
        text = f"- Skill {code_span(skill.path)}{about}"
        lines.append(DigestLine("Layout", 70 - rank * 4, text))
    named = tuple(skill.path for skill in facts.skills[_MAX_DESCRIBED_SKILLS:])
    lines.extend(_catalogue("- More skills", named, 73))
    lines.extend(_catalogue("- Agent docs", facts.agent_docs, 71))
    if facts.root_file_count:
        text = f"- Top level: {count_of(facts.root_file_count, 'file')}"
        # Docs and config are named above already.
        unnamed = [name for name in facts.root_files if name not in facts.notable_files]
        if unnamed:
            text += f"; besides docs and config: {_bounded(unnamed, _MAX_ROOT_FILES)}"
        lines.append(DigestLine("Layout", 70, text))
    if other:
        listed = ", ".join(f"{lang.language} {lang.files:,}" for lang in other[:_MAX_OTHER_TYPES])
        lines.append(DigestLine("Layout", 55, f"- Other files: {listed}"))
    return lines


def _named_by_docs(facts: WorkspaceFacts) -> list[DigestLine]:
    """What the contributor docs and the README point at, which is what a newcomer is sent to
    read: the paths no line above names already."""
    named_above = {
        *facts.notable_files,
        *facts.contributor_docs,
        *(folder.path.rstrip("/") for folder in facts.folders),
    }
    lines: list[DigestLine] = []
    for named in facts.named_paths:
        fresh = tuple(path for path in named.paths if path not in named_above)
        lines.extend(_catalogue(f"- Named in {code_span(named.source)}", fresh, 84))
    return lines


def _docs_and_tests(facts: WorkspaceFacts) -> list[DigestLine]:
    """Where the doc pages are and in which languages; where the tests keep helpers and data."""
    lines: list[DigestLine] = []
    site = facts.docs_site
    if site is not None:
        parts = []
        if site.config is not None:
            parts.append(f"config {code_span(site.config)}")
        pages = f"pages in {code_span(site.pages)}"
        details = [
            f"{label} {code_span(path)}"
            for label, path in (("home", site.home), ("navigation", site.navigation))
            if path is not None
        ]
        if site.migrations:
            details.append("migration guides " + ", ".join(map(code_span, site.migrations)))
        if site.translations:
            details.append("translations " + ", ".join(map(code_span, site.translations)))
        parts.append(pages + (f" ({'; '.join(details)})" if details else ""))
        kind = f" ({plain(site.generator)})" if site.generator else ""
        # A folder of pages with nothing more to say than its home: its Layout line will do.
        if site.config is not None or len(details) > (site.home is not None):
            lines.append(DigestLine("Layout", 84, f"- Docs site{kind}: {'; '.join(parts)}"))
    # Folders with a line of their own, and the largest subfolders those lines name.
    inline = {
        child.rstrip("/")
        for folder in facts.folders
        for child in (folder.path, *folder.subfolders[:_MAX_INLINE_SUBFOLDERS])
    }
    for rank, suite in enumerate(facts.suites):
        areas = tuple(area for area in suite.areas if area not in inline)
        named = [
            f"{label} {', '.join(map(code_span, paths))}"
            for label, paths in (("areas", areas), ("helpers", suite.helpers), ("data", suite.data))
            if paths
        ]
        if not named:
            continue
        size = count_of(suite.files, "file")
        text = f"- Tests in {code_span(suite.path)} ({size}): {'; '.join(named)}"
        lines.append(DigestLine("Layout", 77 - rank * 3, text))
    if facts.docs_checks:
        listed = ", ".join(map(code_span, facts.docs_checks))
        lines.append(DigestLine("Layout", 81, f"- Tests that run the docs' code: {listed}"))
    return lines


def _folders(facts: WorkspaceFacts) -> list[DigestLine]:
    """A line per notable folder, in walking order; where a folder's children have lines of
    their own, the rest of its children follow them, in a few short lines."""
    paths = [note.path for note in facts.folders]
    # A folder's level is how many folders with lines of their own hold it (a package's
    # `src/` may be passed over on the way to its folders).
    above = {
        path: [other for other in paths if other != path and path.startswith(other)]
        for path in paths
    }
    parents = {max(holders, key=len) for holders in above.values() if holders}
    lines: list[DigestLine] = []
    pending: list[tuple[str, list[DigestLine]]] = []
    # Larger folders first, at any depth: a top-level `tasks/` of 1,600 files says more than
    # the twentieth crate of 40, and a package of 250 more than a described one of 40.
    by_size = sorted(facts.folders, key=lambda note: (-note.files, note.path))
    size_rank = {note.path: rank for rank, note in enumerate(by_size)}
    for folder in facts.folders:
        rank = size_rank[folder.path]
        while pending and not folder.path.startswith(pending[-1][0]):
            lines.extend(pending.pop()[1])
        level = len(above[folder.path])
        # Inside a folder, siblings' descriptions run alike ("The X provider for..."): the
        # start tells them apart.
        about = one_line(folder.purpose, _MAX_INNER_PURPOSE) if level else folder.purpose
        purpose = f": {plain(about)}" if about else ""
        if not level and folder.source and folder.source.lower().endswith((".md", ".rst")):
            purpose += f" ({code_span(folder.source)})"  # a top-level folder's own guide
        indent = "  " * level
        inside = ""
        # Inside a package, `src/` and `tests/` say nothing; named folders say what it holds.
        telling = [
            child
            for child in folder.subfolders
            if not level
            or (not folder.purpose and child.rstrip("/").rpartition("/")[2] not in _CONVENTIONAL)
        ]
        if folder.path not in parents and telling:
            shown = telling[:_MAX_INLINE_SUBFOLDERS]
            inside = "; " + ", ".join(code_span(child) for child in shown)
        size = count_of(folder.files, "file")
        text = f"{indent}- {code_span(folder.path)} ({size}{inside}){purpose}"
        # A description is worth twelve places in size.
        base = 82 if folder.purpose else 76
        priority = base - min(rank, 40) * 0.5
        lines.append(DigestLine("Layout", priority, text))
        if folder.path in parents and folder.subfolders:
            label = f"{indent}  - More in {code_span(folder.path)}"
            more = _catalogue(label, folder.subfolders, 54 - level * 4)
            pending.append((folder.path, more))
    while pending:
        lines.extend(pending.pop()[1])
    return lines


def _named(label: str, paths: tuple[str, ...], priority: float) -> list[DigestLine]:
    """`paths` on one line (bounded, then counted), or nothing."""
    if not paths:
        return []
    return [DigestLine("Layout", priority, f"{label}: {_bounded(paths, _MAX_PATHS_PER_LINE)}")]


def _bounded(paths: Sequence[str], limit: int) -> str:
    """The first `limit` of `paths` as code, then how many more there are."""
    listed = ", ".join(code_span(path) for path in paths[:limit])
    more = len(paths) - limit
    return f"{listed} and {more} more" if more > 0 else listed


def _catalogue(
    label: str, paths: tuple[str, ...], priority: float, per_line: int = _MAX_PATHS_PER_LINE
) -> list[DigestLine]:
    """`paths` in lines of a few each, so the budget can keep the head and drop the tail."""
    lines: list[DigestLine] = []
    for start in range(0, len(paths), per_line):
        chunk = ", ".join(code_span(path) for path in paths[start : start + per_line])
        priority_here = priority - 6 * start // per_line
        lines.append(DigestLine("Layout", priority_here, f"{label}: {chunk}"))
    return lines


def _files_summary(facts: WorkspaceFacts) -> str:
    if not facts.file_count:
        summary = "- No readable text files"
    else:
        summary = f"- {count_of(facts.file_count, 'file')}"
    left_out = [
        f"{count:,} {_SKIP_LABELS.get(reason, reason)}" for reason, count in facts.skipped if count
    ]
    return f"{summary} (left out: {', '.join(left_out)})" if left_out else summary
