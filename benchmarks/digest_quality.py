"""How much of what maintainers wrote in their agent files the static digest recovers.

Usage: python benchmarks/digest_quality.py [CORPUS]   (or PROMPTKIT_DIGEST_CORPUS=CORPUS)

CORPUS is a folder of repositories, each either a work tree or a bare git directory (such as
`owner+name/repo`); nothing of theirs is kept. For each repository the benchmark checks out
HEAD into a temporary folder, removes every agent-instruction file (AGENTS.md, CLAUDE.md,
GEMINI.md, .github/copilot-instructions.md, .cursor/rules/), writes the static digest, and
measures recall of what the removed files name. Without a corpus it says so and exits 0.

The matching rule, kept deliberately simple and independent of the digest's own parsers:
- Commands: lines of shell code blocks and inline code spans whose first word is a known
  runner and whose words name a check (test, lint, fmt, format, check, clippy, vet, build,
  typecheck, tsc, mypy...; a file name such as `test.js` is an argument, not a check); lines
  with a `<placeholder>` are left out. A command is
  identified by its first two words after dropping flags (and the value of flags that take
  one, such as `-p oxc`), `VAR=value`, `cd dir &&`, `pnpm run`/`yarn run` -> `pnpm`/`yarn`,
  and taking a third word after `run`/`exec`/`x` (`uv run pytest`, `npm run lint`). It is
  recalled when those words appear, in order and adjacent, in some inline code span of the
  digest (the digest's spans are read with the same rule).
- Paths: inline code spans that name a file or folder that exists in the repository; recalled
  when the digest contains the path (without a trailing slash).
- Tools: words from a fixed vocabulary of developer tools that the agent files mention;
  recalled when the digest mentions the word. A word followed by `.` and a letter is a
  qualified name or a file (`uv.Screen`, `uv.lock`), not the tool. Names that are also
  everyday English (`just`, `make`) count only inside code, and `pre-commit hook` is git's
  hook, not the pre-commit tool.
Tokens are the digest's own estimate (four characters a token); time is scan plus render,
printed also as a ratio to the baseline measured in the same run on the same tree: listing the
workspace's files (`select_files`), which every digest needs first.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from promptkit.hostfiles import select_files
from promptkit.repofacts import estimate_tokens, render_static_digest, scan_workspace

_RUNNERS = {
    "make", "just", "task", "uv", "uvx", "pnpm", "npm", "npx", "yarn", "bun", "cargo", "go",
    "pytest", "python", "python3", "ruff", "mypy", "pyright", "tox", "nox", "hatch", "poetry",
    "pre-commit", "prek", "golangci-lint", "gofumpt", "gofmt", "turbo", "nx", "tsc", "vitest",
    "jest", "eslint", "prettier", "biome", "deno", "./gradlew", "mvn",
}  # fmt: skip
_CHECK_WORDS = re.compile(
    r"\b(test|tests|lint|fmt|format|check|clippy|vet|build|typecheck|type-check|tsc|mypy|"
    r"pyright|ruff|pytest|vitest|jest|nextest|golangci-lint|gofumpt|prettier|eslint|biome)\b"
)
_TOOLS = (
    "uv", "pnpm", "npm", "yarn", "bun", "cargo", "pytest", "ruff", "mypy", "pyright", "tox",
    "nox", "hatch", "poetry", "make", "just", "golangci-lint", "gofumpt", "pre-commit", "prek",
    "lefthook", "vitest", "jest", "eslint", "prettier", "biome", "turbo", "nx", "clippy",
    "rustfmt", "nextest", "insta", "playwright", "maturin", "typescript", "changesets", "tsup",
    "oxlint", "ty", "docker", "taskfile",
)  # fmt: skip
# Tool names that are also everyday English words ("just delete it", "make sure").
_ENGLISH_WORDS = {"just", "make"}
# Flags whose next word is their value, not a subcommand (`cargo run -p oxc`).
_VALUE_FLAGS = {
    "-p", "--package", "-F", "--filter", "--python", "--env-file", "-C", "--dir", "--bin",
    "--example", "--features", "--test", "--directory", "--only-group", "--group", "--extra",
    "-k", "-n", "--profile", "--target",
}  # fmt: skip
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\w*)")
_SHELL = {"", "bash", "sh", "shell", "console", "zsh", "text"}
_INLINE = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class RepoResult:
    name: str
    commands: tuple[int, int]
    paths: tuple[int, int]
    tools: tuple[int, int]
    tokens: int
    seconds: float
    listing_seconds: float
    missed: tuple[str, ...]


def is_agent_file(relative: str) -> bool:
    name = relative.rpartition("/")[2]
    return (
        name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
        or relative == ".github/copilot-instructions.md"
        or relative.startswith(".cursor/rules/")
    )


def words_of(command: str) -> list[str]:
    command = re.sub(r"^\s*[$>]\s*", "", command)
    command = re.sub(r"^cd\s+\S+\s*&&\s*", "", command.strip())
    words: list[str] = []
    skip_value = False
    for word in command.split():
        if skip_value:
            skip_value = False
        elif word in _VALUE_FLAGS:
            skip_value = True
        elif not word.startswith(("-", "+")):
            words.append(word.strip("'\""))
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
        words.pop(0)
    if len(words) >= 3 and words[0] in ("pnpm", "yarn") and words[1] == "run":
        del words[1]
    return words


def command_key(command: str) -> tuple[str, ...] | None:
    words = words_of(command)
    checks = " ".join(word for word in words if "." not in word and "/" not in word)
    if len(words) < 2 or words[0] not in _RUNNERS or not _CHECK_WORDS.search(checks):
        return None
    if any("<" in word for word in words[:3]):  # a placeholder, not a command
        return None
    size = 3 if words[1] in ("run", "exec", "x") and len(words) >= 3 else 2
    return tuple(words[:size])


def agent_facts(text: str, files: set[str]) -> tuple[set[tuple[str, ...]], set[str], set[str]]:
    commands: set[tuple[str, ...]] = set()
    paths: set[str] = set()
    spans: list[str] = []
    fence: str | None = None
    shell = False
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if opening is not None:
            if fence is None:
                fence, shell = opening.group(1), opening.group(2).lower() in _SHELL
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is not None:
            if shell:
                spans.append(re.sub(r"\s+#.*$", "", line))
            continue
        spans.extend(_INLINE.findall(line))
    directories = {path.rsplit("/", i)[0] for path in files for i in range(1, path.count("/") + 1)}
    for span in spans:
        key = command_key(span)
        if key is not None:
            commands.add(key)
        candidate = span.strip().removeprefix("./").rstrip("/")
        looks_like_path = " " not in candidate and ("/" in candidate or "." in candidate)
        if looks_like_path and (candidate in files or candidate in directories):
            paths.add(candidate)
    return commands, paths, {tool for tool in _TOOLS if mentions(text, tool)}


def code_of(text: str) -> str:
    """The code in markdown `text`: its fenced blocks and inline code spans."""
    code: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if opening is not None:
            if fence is None:
                fence = opening.group(1)
            elif line.strip().startswith(fence):
                fence = None
            continue
        code.extend([line] if fence is not None else _INLINE.findall(line))
    return "\n".join(code)


def mentions(text: str, tool: str) -> bool:
    """Whether markdown `text` names `tool` (the same rule for agent files and digests)."""
    where = code_of(text) if tool in _ENGLISH_WORDS else text
    where = re.sub(r"pre-commit hooks?\b", "", where.lower())
    return re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-]|\.\w)", where) is not None


def digest_recall(
    digest: str, commands: set[tuple[str, ...]], paths: set[str], tools: set[str]
) -> tuple[int, int, int, list[str]]:
    spans = [words_of(span) for span in _INLINE.findall(digest)]
    spans += [words_of(part) for span in _INLINE.findall(digest) for part in span.split("&&")]
    missed: list[str] = []
    found_commands = 0
    for key in sorted(commands):
        size = len(key)
        if any(tuple(s[i : i + size]) == key for s in spans for i in range(len(s))):
            found_commands += 1
        else:
            missed.append("cmd " + " ".join(key))
    found_paths = 0
    for path in sorted(paths):
        if path in digest:
            found_paths += 1
        else:
            missed.append("path " + path)
    found_tools = 0
    for tool in sorted(tools):
        if mentions(digest, tool):
            found_tools += 1
        else:
            missed.append("tool " + tool)
    return found_commands, found_paths, found_tools, missed


def checkout(source: Path, target: Path) -> None:
    """Write HEAD's files into `target` (a snapshot may lack its largest blobs: skipped)."""
    if not ((source / "HEAD").is_file() and (source / "objects").is_dir()):
        shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
        return
    git = ["git", "--git-dir", str(source)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", "HEAD"], check=True, capture_output=True
    ).stdout
    entries: list[tuple[bytes, bytes, str]] = []
    for record in listing.split(b"\0"):
        if record:
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, sha = meta.split()
            if kind == b"blob":
                entries.append((mode, sha, raw_path.decode("utf-8", "surrogateescape")))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input=b"".join(sha + b"\n" for _, sha, _ in entries),
        check=True,
        capture_output=True,
    ).stdout
    position = 0
    for mode, _, relative in entries:
        header_end = batch.index(b"\n", position)
        header = batch[position:header_end].split()
        position = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        content = batch[position : position + size]
        position += size + 1
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            destination.symlink_to(content.decode("utf-8", "surrogateescape"))
        else:
            destination.write_bytes(content)


def measure(name: str, source: Path) -> RepoResult:
    with tempfile.TemporaryDirectory(prefix="digest-quality-") as folder:
        root = Path(folder)
        checkout(source, root)
        files = {
            str(path.relative_to(root))
            for path in root.rglob("*")
            if path.is_file() or path.is_symlink()
        }
        agent_text = []
        for relative in sorted(files):
            if is_agent_file(relative):
                path = root / relative
                if path.is_file():
                    agent_text.append(path.read_text(encoding="utf-8", errors="replace"))
                path.unlink()
        files = {path for path in files if not is_agent_file(path)}
        commands, paths, tools = agent_facts("\n".join(agent_text), files)
        started = time.perf_counter()
        select_files(root)
        listing_seconds = time.perf_counter() - started
        started = time.perf_counter()
        digest = render_static_digest(scan_workspace(root))
        seconds = time.perf_counter() - started
    found_c, found_p, found_t, missed = digest_recall(digest, commands, paths, tools)
    return RepoResult(
        name,
        (found_c, len(commands)),
        (found_p, len(paths)),
        (found_t, len(tools)),
        estimate_tokens(digest),
        seconds,
        listing_seconds,
        tuple(missed),
    )


def repositories(corpus: Path) -> list[tuple[str, Path]]:
    found = []
    for entry in sorted(corpus.iterdir()):
        if entry.name.startswith("."):
            continue
        if (entry / "repo").is_dir():
            found.append((entry.name, entry / "repo"))
        elif entry.is_dir():
            found.append((entry.name, entry))
    return found


def ratio(pair: tuple[int, int]) -> str:
    return f"{pair[0]}/{pair[1]}" if pair[1] else "-"


def main() -> int:
    location = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PROMPTKIT_DIGEST_CORPUS")
    if not location or not Path(location).is_dir():
        print("digest_quality: no corpus (pass a folder or set PROMPTKIT_DIGEST_CORPUS); skipped")
        return 0
    verbose = os.environ.get("PROMPTKIT_DIGEST_VERBOSE") == "1"
    results = [measure(name, path) for name, path in repositories(Path(location))]
    print(f"{'repository':42} {'commands':>9} {'paths':>7} {'tools':>7} {'tokens':>6} {'s':>6}")
    for result in results:
        print(
            f"{result.name:42} {ratio(result.commands):>9} {ratio(result.paths):>7} "
            f"{ratio(result.tools):>7} {result.tokens:>6} {result.seconds:>6.2f}"
        )
        if verbose and result.missed:
            print("    missed: " + "; ".join(result.missed))

    def total(pick: str) -> str:
        found = sum(getattr(result, pick)[0] for result in results)
        wanted = sum(getattr(result, pick)[1] for result in results)
        return f"{found}/{wanted} = {found / wanted:.0%}" if wanted else "-"

    tokens = [result.tokens for result in results]
    print(f"\nrepositories: {len(results)}")
    print(f"commands recall: {total('commands')}")
    print(f"paths recall:    {total('paths')}")
    print(f"tools recall:    {total('tools')}")
    print(f"tokens: median {statistics.median(tokens):.0f}, max {max(tokens)}")
    print(f"time: median {statistics.median(r.seconds for r in results):.2f}s")
    ratios = [r.seconds / r.listing_seconds for r in results if r.listing_seconds > 0]
    print(
        f"time / listing baseline: median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
