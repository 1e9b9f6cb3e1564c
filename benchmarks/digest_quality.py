"""How much of what maintainers wrote in their agent files the static digest recovers.

Usage: python benchmarks/digest_quality.py [CORPUS]   (or PROMPTKIT_DIGEST_CORPUS=CORPUS)

CORPUS is a folder of repositories, each either a work tree or a bare git directory (such as
`owner+name/repo`); nothing of theirs is kept. For each repository the benchmark checks out
HEAD into a temporary folder, removes every agent-instruction file (AGENTS.md, CLAUDE.md,
GEMINI.md, .github/copilot-instructions.md, .cursor/rules/, .cursorrules), writes the static
digest, and measures recall of what the removed files name. Without a corpus it says so and
exits 0. An optional `CORPUS/ecosystems.tsv` (lines `name<TAB>ecosystem`, `#` comments) groups
the figures per ecosystem as well.

The matching rule, kept deliberately simple and independent of the digest's own parsers:
- Commands: lines of shell code blocks and inline code spans whose first word is a known
  runner (the vocabulary below, of every ecosystem measured) or a script of the repository run
  by its path (`bin/test`, `./gradlew`, `vendor/bin/phpunit`), and whose words name a check
  (test, lint, fmt, format, check, clippy, vet, build, analyze, typecheck, tsc, mypy, rspec,
  phpunit...; a file name such as `test.js` is an argument, not a check); lines with a
  `<placeholder>`, an optional `[--part]` or an unexpanded variable (`$APP`, `${APP}`) are
  left out. A command is identified by its first two words after dropping flags (and the
  value of flags that take one, such as `-p oxc` or `-scheme App`), `VAR=value`, `cd dir &&`,
  `run` after pnpm, yarn or melos (each runs a script by its name alone too), `npm run test`
  -> `npm test` (npm's own alias), and taking a third word after a word that runs another
  (`run`, `exec`, `x`, `task`: `uv run pytest`, `bundle exec rake`, `deno task test`) or after
  a build tool's step verb (`zig build test`, `nix flake check`). It is recalled when those
  words appear, in order and adjacent, in some inline code span of the digest (the digest's
  spans are read with the same rule).
- Paths: inline code spans that name a file or folder that exists in the repository; recalled
  when the digest contains the path (without a trailing slash).
- Tools: words from a fixed vocabulary of developer tools that the agent files mention;
  recalled when the digest mentions the word. A word followed by `.` and a letter is a
  qualified name or a file (`uv.Screen`, `uv.lock`), and one after `/` a path's part
  (`githooks/pre-commit`), not the tool. Names that are also everyday English (`just`,
  `make`) count only inside shell code (inline code and shell blocks, comments left out: not
  a Python block's `# just call it`), and `pre-commit hook` is git's hook, not the tool.
Tokens are the digest's UTF-8 bytes / 4, rounded up (the budget's own measure); "unwritten"
counts the Commands lines whose program or first argument no file of the repository names
(after the agent files are removed): a command the digest may have invented, listed for review
since an invented command is the worst kind of miss. Time is scan plus render,
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
from promptkit.repofacts import render_static_digest, scan_workspace

_RUNNERS = {
    # Python, JavaScript/TypeScript, Rust, Go (the first corpus)
    "make", "just", "task", "uv", "uvx", "pnpm", "npm", "npx", "yarn", "bun", "bunx", "cargo",
    "go", "pytest", "python", "python3", "ruff", "mypy", "pyright", "tox", "nox", "hatch",
    "poetry", "pre-commit", "prek", "golangci-lint", "gofumpt", "gofmt", "turbo", "nx", "tsc",
    "vitest", "jest", "eslint", "prettier", "biome", "deno", "gradlew", "mvn",
    # JVM, C/C++, Apple, Dart, .NET, Ruby, PHP, Elixir, Scala, Zig, Nix (added with them)
    "gradle", "mvnw", "cmake", "ctest", "meson", "ninja", "bazel", "bazelisk",
    "swift", "xcodebuild", "swiftlint", "swiftformat", "flutter", "dart", "melos", "dotnet",
    "bundle", "rake", "rspec", "rubocop", "ruby", "composer", "php", "mix", "sbt", "mill",
    "scala-cli", "zig", "nix", "clang-format",
}  # fmt: skip
_CHECK_WORDS = re.compile(
    r"\b(test|tests|lint|fmt|format|check|clippy|vet|build|typecheck|type-check|tsc|mypy|"
    r"pyright|ruff|pytest|vitest|jest|nextest|golangci-lint|gofumpt|prettier|eslint|biome|"
    r"analyze|analyse|verify|compile|doctest|rspec|rubocop|phpunit|phpstan|psalm|pest|"
    r"php-cs-fixer|credo|dialyzer|ctest|swiftlint|swiftformat|ktlint|detekt|spotless\w*|"
    r"scalafmt\w*|clang-format|clang-tidy|precommit)\b"
)
_TOOLS = (
    "uv", "pnpm", "npm", "yarn", "bun", "cargo", "pytest", "ruff", "mypy", "pyright", "tox",
    "nox", "hatch", "poetry", "make", "just", "golangci-lint", "gofumpt", "pre-commit", "prek",
    "lefthook", "vitest", "jest", "eslint", "prettier", "biome", "turbo", "nx", "clippy",
    "rustfmt", "nextest", "insta", "playwright", "maturin", "typescript", "changesets", "tsup",
    "oxlint", "ty", "docker", "taskfile",
    # added with the other ecosystems
    "gradle", "maven", "cmake", "ctest", "meson", "ninja", "bazel", "swift", "xcodebuild",
    "swiftlint", "swiftformat", "flutter", "dart", "melos", "dotnet", "bundle", "rake",
    "rspec", "minitest", "rubocop", "composer", "phpunit", "phpstan", "psalm", "pest",
    "php-cs-fixer", "mix", "credo", "dialyzer", "sbt", "mill", "scalafmt", "zig", "nix",
    "deno", "clang-format", "clang-tidy", "ktlint", "detekt", "spotless",
)  # fmt: skip
# Tool names that are also everyday English words ("just delete it", "make sure", "mix of"),
# or a language's name as well as its tool's ("Swift 6", "Dart code").
_ENGLISH_WORDS = {"just", "make", "mix", "bundle", "rake", "pest", "mill", "swift", "dart"}
# Flags whose next word is their value, not a subcommand (`cargo run -p oxc`).
_VALUE_FLAGS = {
    "-p", "--package", "-F", "--filter", "--python", "--env-file", "-C", "--dir", "--bin",
    "--example", "--features", "--test", "--directory", "--only-group", "--group", "--extra",
    "-k", "-n", "--profile", "--target", "-scheme", "-workspace", "-project",
    "-destination", "-configuration", "-B", "-S", "-G", "--preset", "--test-dir", "-j",
    "--config", "-c", "--filter-tags", "--project", "--framework", "-f", "-t",
}  # fmt: skip
# Words after which the next word says what runs (`bundle exec rake`, `deno task test`), and
# build tools whose step follows a verb (`zig build test`, `nix flake check`).
_RUNS_NEXT = {"run", "exec", "x", "task"}
# npm runs these scripts by their name alone: `npm test` is `npm run test`.
_NPM_LIFECYCLE = {"test", "start", "stop", "restart"}
_STEP_VERBS = {("zig", "build"), ("nix", "flake"), ("dart", "run"), ("swift", "package")}
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
    unwritten: tuple[str, ...]
    digest: str


def is_agent_file(relative: str) -> bool:
    name = relative.rpartition("/")[2]
    return (
        name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
        or relative in (".github/copilot-instructions.md", ".cursorrules")
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
    if words:
        words[0] = words[0].removeprefix("./")  # `./bin/test` runs `bin/test`
    if len(words) >= 3 and words[0] in ("pnpm", "yarn", "melos") and words[1] == "run":
        del words[1]  # each runs a script by its name alone too (`melos test`)
    if len(words) >= 3 and words[:2] == ["npm", "run"] and words[2] in _NPM_LIFECYCLE:
        del words[1]  # `npm run test` is `npm test`
    return words


def command_key(command: str, files: frozenset[str] = frozenset()) -> tuple[str, ...] | None:
    """The words that identify `command`, or None when it is no check command; a head that is
    a script of the repository (one of `files`) runs like a known runner."""
    words = words_of(command)
    checks = " ".join(word for word in words if "." not in word and "/" not in word)
    if len(words) < 2 or not _CHECK_WORDS.search(checks) or not is_runner(words[0], files):
        return None
    # A `<placeholder>`, an optional `[--part]` or a variable: a synopsis, not a command.
    if any("<" in word or word.startswith("[") for word in words[:3]) or "$" in command:
        return None
    runs_next = words[1] in _RUNS_NEXT or (words[0], words[1]) in _STEP_VERBS
    size = 3 if runs_next and len(words) >= 3 else 2
    return tuple(words[:size])


def is_runner(head: str, files: frozenset[str]) -> bool:
    if head in _RUNNERS or head.startswith("vendor/bin/"):
        return True
    return "/" in head and head in files


def agent_facts(
    text: str, files: frozenset[str]
) -> tuple[set[tuple[str, ...]], set[str], set[str]]:
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
        key = command_key(span, files)
        if key is not None:
            commands.add(key)
        candidate = span.strip().removeprefix("./").rstrip("/")
        looks_like_path = " " not in candidate and ("/" in candidate or "." in candidate)
        if looks_like_path and (candidate in files or candidate in directories):
            paths.add(candidate)
    return commands, paths, {tool for tool in _TOOLS if mentions(text, tool)}


def shell_code_of(text: str) -> str:
    """The shell code in markdown `text`: its inline code spans and the lines of its shell (or
    untyped) fenced blocks, comments left out; a Python or Ruby block is another language."""
    code: list[str] = []
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
        if fence is None:
            code.extend(_INLINE.findall(line))
        elif shell:
            code.append(re.sub(r"(?:^|\s)#.*$", "", line))
    return "\n".join(code)


def mentions(text: str, tool: str) -> bool:
    """Whether markdown `text` names `tool` (the same rule for agent files and digests)."""
    where = shell_code_of(text) if tool in _ENGLISH_WORDS else text
    where = re.sub(r"pre-commit hooks?\b", "", where.lower())
    # After a `/` the word is a path's part (`githooks/pre-commit`), not the tool.
    return re.search(rf"(?<![\w/-]){re.escape(tool)}(?![\w-]|\.\w)", where) is not None


def digest_recall(
    digest: str, commands: set[tuple[str, ...]], paths: set[str], tools: set[str]
) -> tuple[int, int, int, list[str]]:
    """How many of the agent files' commands, paths and tools the digest names, and the misses.
    A command is recalled by its words in a span, whoever runs it: a span is not asked to
    pass `command_key` again, so `bin/test` is found in a span that says `bin/test`."""
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
        listed = {
            str(path.relative_to(root))
            for path in root.rglob("*")
            if path.is_file() or path.is_symlink()
        }
        agent_text = []
        for relative in sorted(listed):
            if is_agent_file(relative):
                path = root / relative
                if path.is_file():
                    agent_text.append(path.read_text(encoding="utf-8", errors="replace"))
                path.unlink()
        files = frozenset(path for path in listed if not is_agent_file(path))
        commands, paths, tools = agent_facts("\n".join(agent_text), files)
        started = time.perf_counter()
        select_files(root)
        listing_seconds = time.perf_counter() - started
        started = time.perf_counter()
        digest = render_static_digest(scan_workspace(root))
        seconds = time.perf_counter() - started
        unwritten = unwritten_commands(digest, root, files)
    found_c, found_p, found_t, missed = digest_recall(digest, commands, paths, tools)
    return RepoResult(
        name,
        (found_c, len(commands)),
        (found_p, len(paths)),
        (found_t, len(tools)),
        byte_tokens(digest),
        seconds,
        listing_seconds,
        tuple(missed),
        tuple(unwritten),
        digest,
    )


def byte_tokens(text: str) -> int:
    """Tokens as the budget counts them: UTF-8 bytes / 4, rounded up."""
    return -(-len(text.encode("utf-8")) // 4)


_COMMAND_LINE = re.compile(r"^- [A-Z][\w-]*: (`+) ?(.+?) ?\1")
_TEXT_READ_LIMIT = 512 * 1024


def unwritten_commands(digest: str, root: Path, files: frozenset[str]) -> list[str]:
    """The Commands lines' commands whose program, or whose first argument, no file of the
    repository names as a word: a command the digest may have invented."""
    wanted: dict[str, list[re.Pattern[str]]] = {}
    in_commands = False
    for line in digest.splitlines():
        if line.startswith("### "):
            in_commands = line == "### Commands"
            continue
        found = _COMMAND_LINE.match(line) if in_commands else None
        if found is None:
            continue
        command = re.sub(r"^cd \S+ && ", "", found.group(2))
        words = [word for word in command.split() if not word.startswith("-")][:2]
        words[:1] = [words[0].removeprefix("./")] if words else []
        wanted[command] = [
            re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])") for word in words if word
        ]
    if not wanted:
        return []
    texts = []
    for relative in sorted(files):
        path = root / relative
        try:
            if path.is_symlink() or path.stat().st_size > _TEXT_READ_LIMIT:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" not in data:
            texts.append(data.decode("utf-8", "replace"))
    corpus = "\n".join(texts)
    return [
        command
        for command, patterns in wanted.items()
        if any(pattern.search(corpus) is None for pattern in patterns)
    ]


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


def ecosystems(corpus: Path) -> dict[str, str]:
    """`CORPUS/ecosystems.tsv`: each repository's ecosystem, when the corpus says."""
    table = corpus / "ecosystems.tsv"
    if not table.is_file():
        return {}
    labels: dict[str, str] = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and not line.startswith("#"):
            labels[fields[0].strip()] = fields[1].strip()
    return labels


def ratio(pair: tuple[int, int]) -> str:
    return f"{pair[0]}/{pair[1]}" if pair[1] else "-"


def share(results: list[RepoResult], pick: str) -> str:
    found = sum(getattr(result, pick)[0] for result in results)
    wanted = sum(getattr(result, pick)[1] for result in results)
    return f"{found}/{wanted} = {found / wanted:.0%}" if wanted else "-"


def main() -> int:
    location = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PROMPTKIT_DIGEST_CORPUS")
    if not location or not Path(location).is_dir():
        print("digest_quality: no corpus (pass a folder or set PROMPTKIT_DIGEST_CORPUS); skipped")
        return 0
    verbose = os.environ.get("PROMPTKIT_DIGEST_VERBOSE") == "1"
    keep = os.environ.get("PROMPTKIT_DIGEST_KEEP")  # a folder to write each digest into
    corpus = Path(location)
    labels = ecosystems(corpus)
    results = [measure(name, path) for name, path in repositories(corpus)]
    print(
        f"{'repository':36} {'ecosystem':13} {'commands':>9} {'paths':>7} {'tools':>7} "
        f"{'tokens':>6} {'unwritten':>9} {'s':>5}"
    )
    for result in results:
        print(
            f"{result.name:36} {labels.get(result.name, '-'):13} {ratio(result.commands):>9} "
            f"{ratio(result.paths):>7} {ratio(result.tools):>7} {result.tokens:>6} "
            f"{len(result.unwritten):>9} {result.seconds:>5.2f}"
        )
        if verbose and result.missed:
            print("    missed: " + "; ".join(result.missed))
        if verbose and result.unwritten:
            print("    unwritten: " + "; ".join(result.unwritten))
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{result.name}.md").write_text(result.digest + "\n", encoding="utf-8")
    if labels:
        print(f"\n{'ecosystem':16} {'repos':>5} {'commands':>16} {'paths':>16} {'tools':>16}")
        for label in sorted(set(labels.values())):
            group = [result for result in results if labels.get(result.name) == label]
            if group:
                print(
                    f"{label:16} {len(group):>5} {share(group, 'commands'):>16} "
                    f"{share(group, 'paths'):>16} {share(group, 'tools'):>16}"
                )
    tokens = [result.tokens for result in results]
    over = sum(token > 2000 for token in tokens)
    print(f"\nrepositories: {len(results)}")
    print(f"commands recall: {share(results, 'commands')}")
    print(f"paths recall:    {share(results, 'paths')}")
    print(f"tools recall:    {share(results, 'tools')}")
    print(
        f"tokens (UTF-8 bytes / 4): median {statistics.median(tokens):.0f}, max {max(tokens)}, "
        f"over 2,000: {over}"
    )
    print(f"unwritten commands: {sum(len(result.unwritten) for result in results)}")
    print(f"time: median {statistics.median(r.seconds for r in results):.2f}s")
    ratios = [r.seconds / r.listing_seconds for r in results if r.listing_seconds > 0]
    print(
        f"time / listing baseline: median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
