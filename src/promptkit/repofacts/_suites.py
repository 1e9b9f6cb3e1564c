"""Where a project's test suites are, and what they keep besides tests.

Maintainers tell a newcomer where the tests live and what sits next to them: the helper
modules the tests share (`tests/cassette_utils.py`), the folders of recorded data, fixtures
and snapshots that a change may have to update (`tests/cassettes`, `tests/fixtures`), and the
tests that run the documentation's examples, which break when a doc page changes, and the
tests of the modules the code revolves around (`tests/client/test_client.py` for
`src/mcp/client/client.py`). This module finds them from the listing alone; `scan_workspace`
records them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = [
    "TEST_FILE_NAME",
    "TEST_FOLDER_NAMES",
    "SuiteFolder",
    "docs_checks",
    "module_tests",
    "suite_folders",
]

# A file name that says it holds tests (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`,
# type tests `x.test-d.ts`) or their shared fixtures (`conftest.py`): a regular expression.
TEST_FILE_NAME = r"test_.*|.*_test\.\w+|.*\.(?:test|spec|test-d)\.\w+|conftest\.py"

# The folder names a test suite lives under.
_SUITE_NAMES = frozenset(
    {"tests", "test", "testing", "__tests__", "e2e", "spec", "integration-tests",
     "integration_tests"}
)  # fmt: skip
# What a suite keeps besides tests: recorded responses, fixtures, snapshots, expected output.
_DATA_NAMES = frozenset(
    {
        "fixtures", "fixture", "assets", "cassettes", "snapshots", "__snapshots__", "testdata",
        "data", "golden", "goldens", "conformance", "integration", "integrations", "mdtest",
        "expected", "samples", "resources", "recordings",
    }
)  # fmt: skip
# Folders that hold tests or what tests feed on: whatever sits below them is test input.
TEST_FOLDER_NAMES = _SUITE_NAMES | {"fixtures", "fixture", "testdata", "snapshots", "__snapshots__"}
_MAX_SUITES = 3
_MIN_SUITE_FILES = 2
_MAX_SUITE_DEPTH = 3
_MAX_DATA_BELOW = 4
_MAX_DATA = 5
_MAX_HELPERS = 4
_MAX_AREAS = 8
_SMALL_SUITE = 3
# Not a helper: a test, a package marker or a snapshot.
_NOT_HELPER = re.compile(rf"{TEST_FILE_NAME}|__init__\.py|.*\.snap")
_HELPER = re.compile(r".*\.(?:py|[cm]?[jt]sx?|go|rs|rb|java|kt)")
# Named for the docs, the readme or the examples as a whole word (`test_docs_parity.py`,
# `examples.test.ts`), not as the start of another (`test_docker.py`).
_DOCS_CHECK = re.compile(
    r"test_(?:docs?|readme|examples?)(?:_\w+)?\.py|"
    r"(?:docs?|readme|examples?)(?:[-_.][\w-]+)?\.(?:test|spec)\.[cm]?[jt]sx?|"
    r"(?:docs?|readme|examples?)(?:_\w+)?_test\.go",
    re.IGNORECASE,
)
_MAX_DOCS_CHECKS = 6


@dataclass(frozen=True, slots=True)
class SuiteFolder:
    """A folder of tests: its `path`, how many `files` it holds, the `helpers` its tests share
    (modules at its top level that are not tests), its `data` folders (fixtures, snapshots,
    recorded cassettes) and its `areas`, the other folders in it, largest first (a suite is
    split by what it tests: `tests/mcp`, `testing/stress`). A suite of a few files lists them
    all as `helpers`."""

    path: str
    files: int
    helpers: tuple[str, ...]
    data: tuple[str, ...]
    areas: tuple[str, ...] = ()


def suite_folders(paths: list[str]) -> tuple[SuiteFolder, ...]:
    """The largest test suites (at most four, each at most three folders deep), largest first."""
    sizes: Counter[str] = Counter()
    members: dict[str, list[str]] = {}
    for path in paths:
        # The cheap test first, for the many paths of a big tree that name no suite.
        if "test" not in path and "e2e/" not in path and "spec/" not in path:
            continue
        suite = _suite_of(path)
        if suite is not None:
            sizes[suite] += 1
            members.setdefault(suite, []).append(path)
    # A folder with one test file is a file's neighbour, not a suite.
    found = [suite for suite in sizes if sizes[suite] >= _MIN_SUITE_FILES]
    largest = sorted(found, key=lambda suite: (-sizes[suite], suite))[:_MAX_SUITES]
    return tuple(_describe(suite, members[suite]) for suite in largest)


def docs_checks(paths: list[str]) -> tuple[str, ...]:
    """Tests that run the docs' or examples' code (`tests/test_examples.py`), shallowest first."""
    found = [
        path
        for path in paths
        if ("doc" in path or "example" in path or "eadme" in path or "EADME" in path)
        and _suite_of(path) is not None
        and _DOCS_CHECK.fullmatch(path.rpartition("/")[2]) is not None
    ]
    return tuple(sorted(found, key=lambda path: (path.count("/"), path))[:_MAX_DOCS_CHECKS])


def _suite_of(path: str) -> str | None:
    folders = path.split("/")[:-1]
    for depth, folder in enumerate(folders[:_MAX_SUITE_DEPTH]):
        if folder in _SUITE_NAMES:
            return "/".join(folders[: depth + 1])
    return None


def _describe(suite: str, files: list[str]) -> SuiteFolder:
    start = len(suite) + 1
    if len(files) <= _SMALL_SUITE:
        return SuiteFolder(suite, len(files), tuple(files), ())
    helpers = [
        path
        for path in files
        if "/" not in path[start:]
        and _HELPER.fullmatch(path[start:]) is not None
        and _NOT_HELPER.fullmatch(path[start:]) is None
    ]
    # Data folders directly in the suite, then those one level down unless every area of the
    # suite has its own (`<area>/fixtures` in each of forty areas is a pattern, not a place).
    top: set[str] = set()
    below: set[str] = set()
    for path in files:
        inner = path[start:].split("/")[:-1]
        if inner and inner[0] in _DATA_NAMES:
            top.add(f"{suite}/{inner[0]}")
        elif len(inner) > 1 and inner[1] in _DATA_NAMES:
            below.add(f"{suite}/{inner[0]}/{inner[1]}")
    data = sorted(top) + (sorted(below) if len(below) <= _MAX_DATA_BELOW else [])
    areas: Counter[str] = Counter()
    for path in files:
        inner = path[start:].split("/")[:-1]
        if inner and inner[0] not in _DATA_NAMES:
            areas[f"{suite}/{inner[0]}"] += 1
    largest = sorted(areas, key=lambda area: (-areas[area], area))[:_MAX_AREAS]
    return SuiteFolder(
        suite, len(files), tuple(helpers[:_MAX_HELPERS]), tuple(data[:_MAX_DATA]), tuple(largest)
    )


def module_tests(modules: tuple[str, ...], paths: list[str]) -> tuple[str, ...]:
    """The test file named for each of `modules` (`models/anthropic.py` ->
    `tests/models/test_anthropic.py`, `stream-text.ts` -> `stream-text.test.ts`), in the order
    of `modules`; of several, the one whose folders mirror the module's, then the shallowest."""
    wanted: dict[str, list[str]] = {}
    for module in modules:
        stem, dot, extension = module.rpartition("/")[2].rpartition(".")
        if not dot:
            continue
        for name in (
            f"test_{stem}.{extension}",
            f"{stem}_test.{extension}",
            f"{stem}.test.{extension}",
            f"{stem}.spec.{extension}",
        ):
            wanted.setdefault(name, []).append(module)
    found: dict[str, list[str]] = {}
    for path in paths:
        # The cheap test first, for the many paths of a big tree that name no test.
        if "test" not in path and "spec" not in path:
            continue
        for module in wanted.get(path.rpartition("/")[2], ()):
            found.setdefault(module, []).append(path)

    def closeness(module: str, test: str) -> tuple[int, int, str]:
        shared = set(module.split("/")[:-1]) & set(test.split("/")[:-1])
        return -len(shared), test.count("/"), test

    return tuple(
        min(found[module], key=lambda test: closeness(module, test))
        for module in modules
        if module in found
    )
