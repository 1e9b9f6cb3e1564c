"""The modules a maintainer names besides the largest: their tests, what packages export and
what entry points re-export; the workspace packages read first; larger folders kept first."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from promptkit.repofacts import render_static_digest, scan_workspace
from promptkit.repofacts._digest_layout import layout_lines
from promptkit.repofacts._public_api import reexported_modules

Writer = Callable[[Path, str, str | bytes], Path]


def write_all(write: Writer, root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        write(root, relative, text)


def digest_of(root: Path, max_tokens: int = 100_000) -> str:
    return render_static_digest(scan_workspace(root), max_tokens=max_tokens)


def reexports_in(root: Path, entry_point: str, known: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What `entry_point` re-exports, read through the files under `root`."""
    listed = {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}

    def read(relative: str, limit: int = 1 << 20, /) -> str:
        return (root / relative).read_text(encoding="utf-8")[:limit]

    return reexported_modules((entry_point,), listed, read, known=known)


def a_large_module_and(*tests: str) -> dict[str, str]:
    """The large module `src/shop/client/session.py` and the test files `tests`."""
    return {"src/shop/client/session.py": "x = 1\n" * 400} | dict.fromkeys(
        tests, "def test(): ...\n"
    )


def test_the_tests_named_for_the_largest_modules_are_named(tmp_path: Path, write: Writer) -> None:
    write_all(
        write, tmp_path, a_large_module_and("tests/client/test_session.py", "tests/test_x.py")
    )

    digest = digest_of(tmp_path)

    assert "- Tests of the largest modules: `tests/client/test_session.py`\n" in digest


def test_of_several_tests_named_for_a_module_the_one_mirroring_its_folders_is_named(
    tmp_path: Path, write: Writer
) -> None:
    tests = ("tests/test_session.py", "tests/client/test_session.py")
    write_all(write, tmp_path, a_large_module_and(*tests))

    assert scan_workspace(tmp_path).module_tests == ("tests/client/test_session.py",)


def test_a_packages_subpath_exports_name_the_source_files_they_point_at(
    tmp_path: Path, write: Writer
) -> None:
    exports = {
        ".": "./dist/index.js",
        "./stdio": {"types": "./src/stdio.ts", "import": "./src/stdio.ts"},
        "./built": "./dist/built.js",
    }
    write_all(
        write,
        tmp_path,
        {
            "package.json": json.dumps({"name": "sdk", "exports": exports}),
            "src/stdio.ts": "export const stdio = 1\n",
            "src/index.ts": "export const x = 1\n",
        },
    )

    digest = digest_of(tmp_path)

    assert "- Package exports: `src/stdio.ts`\n" in digest


def test_an_exports_map_nested_deeper_than_recursion_allows_is_read_without_failing(
    tmp_path: Path, write: Writer
) -> None:
    depth = 900
    nested = '{"a": ' * depth + '"./src/x.ts"' + "}" * depth
    write_all(
        write,
        tmp_path,
        {
            "package.json": f'{{"name": "deep", "exports": {{"./x": {nested}}}}}',
            "src/x.ts": "export const x = 1\n",
        },
    )

    assert scan_workspace(tmp_path).exported_modules == ("src/x.ts",)


def test_the_modules_an_index_ts_re_exports_are_named_in_its_order(
    tmp_path: Path, write: Writer
) -> None:
    index = (
        "export { StdioTransport } from './client/stdio.js';\n"
        "export type { Missing } from './client/missing';\n"
        "export * from './client/sse';\n"
        "export const version = '1';\n"
    )
    write_all(
        write,
        tmp_path,
        {
            "packages/client/src/index.ts": index,
            "packages/client/src/client/stdio.ts": "export class StdioTransport {}\n",
            "packages/client/src/client/sse.ts": "export class SseTransport {}\n",
        },
    )

    found = reexports_in(tmp_path, "packages/client/src/index.ts")

    assert found == ("packages/client/src/client/stdio.ts", "packages/client/src/client/sse.ts")


def test_a_re_export_written_over_several_lines_is_named_and_an_import_is_not(
    tmp_path: Path, write: Writer
) -> None:
    index = (
        "import { helper } from './helper';\n"
        "export type {\n"
        "    AuthOptions,\n"
        "    AuthResult\n"
        "} from './client/auth';\n"
    )
    write_all(
        write,
        tmp_path,
        {
            "src/index.ts": index,
            "src/helper.ts": "export const helper = 1\n",
            "src/client/auth.ts": "export type AuthOptions = {}\n",
        },
    )

    assert reexports_in(tmp_path, "src/index.ts") == ("src/client/auth.ts",)


def test_the_modules_an_init_py_imports_from_are_named(tmp_path: Path, write: Writer) -> None:
    init = (
        '"""The shop SDK."""\n'
        "from . import types as types\n"
        "from .client.stdio import stdio_client\n"
        "from .server import serve\n"
        "from .missing import nothing\n"
    )
    write_all(
        write,
        tmp_path,
        {
            "src/shop/__init__.py": init,
            "src/shop/types.py": "x = 1\n",
            "src/shop/client/stdio.py": "def stdio_client(): ...\n",
            "src/shop/server/__init__.py": "def serve(): ...\n",
        },
    )

    found = reexports_in(tmp_path, "src/shop/__init__.py")

    assert found == ("src/shop/client/stdio.py", "src/shop/server/__init__.py")


def test_a_module_named_among_the_largest_is_not_named_again_as_re_exported(
    tmp_path: Path, write: Writer
) -> None:
    write_all(
        write,
        tmp_path,
        {
            "src/shop/__init__.py": "from .client import Client\nfrom .stdio import stdio\n",
            "src/shop/client.py": "class Client: ...\n",
            "src/shop/stdio.py": "def stdio(): ...\n",
        },
    )

    found = reexports_in(tmp_path, "src/shop/__init__.py", known=("src/shop/client.py",))

    assert found == ("src/shop/stdio.py",)


def pnpm_monorepo(*globs: str) -> dict[str, str]:
    """A pnpm workspace of `globs` whose `packages/core` has a `test` script."""
    listed = "".join(f"  - '{glob}'\n" for glob in globs)
    return {
        "package.json": '{"name": "mono", "packageManager": "pnpm@9.0.0"}',
        "pnpm-workspace.yaml": f"packages:\n{listed}",
        "packages/core/package.json": '{"name": "core", "scripts": {"test": "vitest"}}',
    }


def test_a_double_star_workspace_glob_holds_the_folders_directly_below(
    tmp_path: Path, write: Writer
) -> None:
    write_all(write, tmp_path, pnpm_monorepo("packages/**/*"))

    assert "`pnpm test` in `packages/core/`" in digest_of(tmp_path)


def test_workspace_packages_are_read_in_the_order_their_globs_name_them(
    tmp_path: Path, write: Writer
) -> None:
    # More examples than the packages read per workspace, all alphabetically before `packages/`.
    examples = {
        f"examples/demo{index:02d}/package.json": '{"scripts": {"start": "node ."}}'
        for index in range(45)
    }
    write_all(write, tmp_path, examples | pnpm_monorepo("packages/*", "examples/*"))

    assert "`pnpm test` in `packages/core/`" in digest_of(tmp_path)


def test_a_large_folder_without_a_description_is_kept_before_a_small_described_one(
    tmp_path: Path, write: Writer
) -> None:
    files = {f"crates/big/src/m{index:02d}.rs": "fn f() {}\n" for index in range(60)}
    # Enough folders between the two in size that a description no longer makes up for size.
    for folder in range(14):
        files |= {f"crates/mid{folder:02d}/src/m{index}.rs": "fn f() {}\n" for index in range(3)}
    files["crates/small/Cargo.toml"] = '[package]\nname = "small"\ndescription = "A helper."\n'
    files["crates/small/src/lib.rs"] = "//! A helper.\n"
    write_all(write, tmp_path, files)

    lines = layout_lines(scan_workspace(tmp_path))
    priority = {line.text.split("`")[1]: line.priority for line in lines if "`" in line.text}

    assert priority["crates/big/"] > priority["crates/small/"]


def test_ci_lines_that_use_a_variable_are_not_shown(tmp_path: Path, write: Writer) -> None:
    steps = "".join(
        f"      - run: {line}\n"
        for line in ("cargo bloat --release >> $GITHUB_STEP_SUMMARY", "cargo deny check")
    )
    write(tmp_path, ".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n" + steps)

    digest = digest_of(tmp_path)

    assert "cargo bloat" not in digest
    assert "`cargo deny check`" in digest
