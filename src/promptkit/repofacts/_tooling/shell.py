"""Command lines: what a line runs, and whether it is a command a person could type at all.

A command is recognised by its shape and by the repository's own evidence, never by a list of
known tools: a line of a CI step, a runner's recipe or a doc's shell block is a command when a
person could type it as it stands. It is not when it holds an unexpanded variable (`$APP`,
`${APP_NAME}`, `"$proj"`), a `<placeholder>` or an optional `[--part]`; when it is a fragment
cut from a longer line (an unclosed quote or parenthesis, `make &&`); when its first word is
a folder, or a path the repository does not hold; when it sets something up (installs, adds,
syncs or fetches); when it is the shell's own plumbing (`cd`, `export`, `echo`, `git`, `curl`,
an operating system's package manager); or when it reads as prose.

`peel` drops what only prepares the environment a command runs in (`VAR=1`, `env`, `sudo`,
`time`, `xvfb-run`, `nix develop -c`, `nix-shell --run '...'`): CI runs `nix develop -c zig
build test`, a contributor types `zig build test` in the same shell. `tool_words` goes further
for what a command is for: past the runner that starts the tool (`bundle exec rspec` runs
rspec, `uv run mypy` runs mypy, `php vendor/bin/phpunit` runs phpunit).
"""

from __future__ import annotations

import re

__all__ = ["head_of", "is_utility", "peel", "tool_words", "unrunnable"]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
# One `VAR=value` in front of a command, its value quoted or not (`FLAGS='-D warnings' cargo`).
_LEADING_ASSIGNMENT = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|[^\s'\"])*(?:\s+|$)"
)
# `path=$(nix build)` stores a command's output: the line is an assignment, not that command.
_SUBSTITUTION = re.compile(r"=[\"']?(?:\$\(|`)")
# `$VAR`, `${VAR}`, `$(command)`, `$1`: set as a script or a CI step runs, not by the reader.
_VARIABLE = re.compile(r"\$(?:[A-Za-z_{(]|\d)")
_PLACEHOLDER = re.compile(r"<[^<>\s=][^<>]*>|(?:^|\s)\[[^\]\s]|\{[a-z][a-z_ ]*\}")
# A prompt is followed by a space (`$ make test`); `$count++` is a variable.
_PROMPT = re.compile(r"^(?:[$>%]\s+|PS[^>]*>\s*)")
_TRAILING_COMMENT = re.compile(r"\s+#\s.*$")
# A program's name (`zig`, `php-cs-fixer`, `python3.12`) or a path to one (`./gradlew`).
_PROGRAM = re.compile(r"(?=[\w.+-]*[a-z])[a-z0-9_][\w+-]*(?:\.[\w+-]+)*")
_PATH = re.compile(r"(?:\.{1,2}/)?[\w.+-]+(?:/[\w.+@-]+)+|\./[\w.+-]+")
# Setting up is not checking: installs, dependency syncs and fetches prepare the checkout.
_SETUP_WORD = re.compile(
    r"\b(?:install|add|setup|sync|download|upload|cache|restore|bootstrap|fetch|get|update|"
    r"upgrade|deps\.get|init)\b"
)
_INFO_ONLY = re.compile(r"\s(?:--help|-h|--version|-V|version|--info|info)\s*$")
# Output a person could not type back: pipes into another program, redirections into files.
_PLUMBING = re.compile(r"(?<![|&])\|(?![|&])|(?<![0-9&])>{1,2}(?!&)|\s<\s")

# The shell's own words and general-purpose utilities: they move files, fetch things or set
# the environment up, and say nothing about how the project is built or checked.
_UTILITIES = frozenset(
    {
        "cd", "pushd", "popd", "export", "unset", "set", "source", ".", "alias", "echo",
        "printf", "cat", "ls", "dir", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "touch", "chmod",
        "chown", "curl", "wget", "git", "gh", "hub", "brew", "apt", "apt-get", "dnf", "yum",
        "pacman", "apk", "zypper", "port", "choco", "winget", "scoop", "snap", "which", "where",
        "whereis", "type", "open", "xdg-open", "start", "code", "vim", "vi", "nano", "emacs",
        "grep", "rg", "find", "fd", "sed", "awk", "xargs", "tar", "zip", "unzip", "gzip",
        "ssh", "scp", "rsync", "kill", "killall", "ps", "pwd", "exit", "true", "false", "test",
        "[", "[[", "read", "sleep", "wait", "tee", "head", "tail", "sort", "uniq", "wc", "diff",
        "cmp", "date", "uname", "whoami", "id", "su", "history", "clear", "less", "more", "man",
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
        "esac", "function", "return", "shift", "trap", "eval", "exec", "local", "declare",
        "readonly", "let", "mktemp", "basename", "dirname", "realpath", "readlink", "stat",
        "du", "df", "free", "top", "env", "printenv", "ulimit", "umask", "jq", "yq", "base64",
        "sha256sum", "shasum", "md5sum", "openssl", "gpg", "pip", "pip3", "pipx", "nvm", "fnm",
        "sdk", "rbenv", "pyenv", "asdf", "rustup", "corepack", "xcode-select", "xcrun",
        "defaults", "launchctl", "systemctl", "service", "sysctl", "mount", "umount",
        "docker-credential-helper", "ssh-keygen", "ssh-add", "setx", "cls", "copy", "del",
        "move", "ren", "md", "rd", "cmd", "call", "powershell", "pwsh", "wsl", "sh", "bash",
        "zsh", "fish", "throw", "foreach", "param", "try", "catch", "finally", "break",
        "continue", "pkill", "pgrep", "script", "osascript",
    }
)  # fmt: skip
_INLINE_PROGRAM = re.compile(r"\s(?:-e|-c|--eval)\s")
# Scripts and programs under these paths exist only once dependencies are installed.
_INSTALLED_PATHS = ("vendor/bin/", "node_modules/.bin/")

_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
# Environment wrappers: the command they run is the command.
_ENVIRONMENT_WRAPPERS = frozenset({"sudo", "time", "nice", "command", "exec", "env", "xvfb-run"})
# Runners that start another tool: what the command is for is what that tool does.
_RUNNER_PREFIXES: tuple[tuple[str, ...], ...] = (
    ("bundle", "exec"),
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("pipenv", "run"),
    ("rye", "run"),
    ("pixi", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("npm", "exec"),
    ("dotnet", "tool", "run"),
    ("python", "-m"),
    ("python3", "-m"),
    ("npx",),
    ("bunx",),
    ("uvx",),
)
# Interpreters in front of a script's path: the script is what runs.
_INTERPRETERS = frozenset(
    {"php", "ruby", "node", "bash", "sh", "zsh", "pwsh", "python", "python3", "perl", "deno"}
)


def head_of(line: str) -> str:
    """The first word of `line` past environment assignments and wrappers ("" for none)."""
    words = peel(line).split()
    return words[0] if words else ""


def is_utility(program: str) -> bool:
    """Whether `program` is the shell's own or a general-purpose utility."""
    return program in _UTILITIES


def peel(line: str) -> str:
    """`line` without its prompt, trailing comment and the wrappers that only prepare its
    environment (`VAR=1`, `env`, `sudo`, `time`, `xvfb-run -a`, `nix develop -c`,
    `nix-shell --run '...'`)."""
    line = _TRAILING_COMMENT.sub("", _PROMPT.sub("", line.strip())).strip()
    for _ in range(8):  # a wrapper may wrap another; a bound keeps odd input cheap
        words = line.split()
        if not words:
            return ""
        head = words[0]
        # A wrapper run by its path is that wrapper (`${{ steps.b.outputs.path }}/bin/devenv`).
        collapsed = _CI_EXPRESSION.sub("$", line).split()
        wrapper = collapsed[0].rpartition("/")[2]
        assignment = _LEADING_ASSIGNMENT.match(line)
        if assignment is not None and _SUBSTITUTION.search(head) is None:
            line = line[assignment.end() :].lstrip()
        elif head in _ENVIRONMENT_WRAPPERS and len(words) > 1:
            rest = words[1:]
            # `xvfb-run -a`, `env -u X`, `nice -n 10`: their options go with them.
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in ("-n", "-u", "-s", "--server-args") else rest[1:]
            line = " ".join(rest)
        elif wrapper in ("nix", "devbox", "mise", "direnv", "devenv") and len(words) > 2:
            inner = _wrapped_command(line, collapsed, wrapper)
            if inner is None:
                return line
            line = inner
        elif head == "nix-shell":
            found = re.search(r"--run\s+(['\"])(.+?)\1", line)
            if found is None:
                return line
            line = found.group(2)
        else:
            return line
    return line


def _wrapped_command(line: str, words: list[str], wrapper: str) -> str | None:
    """The command `nix develop -c ...`, `devbox run -- ...`, `mise exec -- ...`, `devenv
    shell -- ...` or `direnv exec . ...` runs, or None when `line` runs no other command.
    The wrapper's own options may come before its verb (`devenv --system x shell -- ...`)."""
    if wrapper == "direnv":
        return " ".join(words[3:]) if words[1] == "exec" and len(words) > 3 else None
    verbs = [word for word in words[1:] if (wrapper, word) in _WRAPPER_MARKERS]
    if not verbs:
        return None
    markers = _WRAPPER_MARKERS[(wrapper, verbs[0])]
    for index, word in enumerate(words[2:], start=2):
        if word in markers:
            return " ".join(words[index + 1 :]) or None
    return None


# What each environment wrapper's verb takes before the command it runs.
_WRAPPER_MARKERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("nix", "develop"): ("-c", "--command"),
    ("nix", "shell"): ("-c", "--command"),
    ("devbox", "run"): ("--",),
    ("mise", "exec"): ("--",),
    ("mise", "x"): ("--",),
    ("devenv", "shell"): ("--",),
}
# A GitHub Actions expression, one word whatever spaces it holds.
_CI_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


def tool_words(command: str) -> list[str]:
    """The words of the tool a command runs and its arguments, flags and paths left out:
    past environment wrappers, `cd dir &&`, the runner that starts the tool (`bundle exec`,
    `uv run`, `npx`) and an interpreter in front of a script (`php vendor/bin/phpunit`)."""
    line = peel(re.sub(r"^cd\s+\S+\s*&&\s*", "", command.strip()))
    words = [word.strip("'\"") for word in line.split()]
    for prefix in _RUNNER_PREFIXES:
        if tuple(words[: len(prefix)]) == prefix and len(words) > len(prefix):
            words = words[len(prefix) :]
            break
    if len(words) > 1 and words[0] in _INTERPRETERS and _PATH.fullmatch(words[1]):
        words = words[1:]
    while words and _ASSIGNMENT.fullmatch(words[0]):
        words = words[1:]
    if not words:
        return []
    return [words[0]] + [word for word in words[1:] if not word.startswith("-")]


# One reason per kind of line that is no command, tested in order: a table of cases.
def unrunnable(line: str, present: frozenset[str]) -> str | None:  # noqa: C901, PLR0912
    """Why `line` is no command a person could type, or None when it is one.

    `present` holds the repository's file paths: a script run by its path must be one of them
    (or installed by the project's package manager, under `vendor/bin/`), and a path to a
    folder is a folder, not a command.
    """
    stripped = _TRAILING_COMMENT.sub("", _PROMPT.sub("", line.strip())).strip()
    if not stripped or stripped.startswith("#"):
        return "empty"
    if _VARIABLE.search(stripped):
        return "variable"
    if _PLACEHOLDER.search(stripped):
        return "placeholder"
    if _PLUMBING.search(stripped):
        return "plumbing"
    if _is_fragment(stripped):
        return "fragment"
    # `cd demo && vendor/bin/phpstan`: what a contributor types in that folder.
    folder = _CD_PREFIX.match(stripped)
    if folder is not None:
        inside = folder.group(1) + "/"
        if not any(path.startswith(inside) for path in present):
            return "missing"
        stripped = stripped[folder.end() :]
    command = peel(stripped)
    words = command.split()
    if not words:
        return "empty"
    head = words[0].strip("'\"")
    if head in _INTERPRETERS and len(words) > 1 and "/" in words[1]:
        head = words[1].strip("'\"")  # `bash .ci/run lint` runs `.ci/run`
    if head.endswith(("/", "\\")):
        return "folder"
    if "/" in head:
        reason = _path_reason(head, present)
        if reason is not None:
            return reason
    elif _PROGRAM.fullmatch(head) is None or head.endswith((":", ",")):
        return "prose"
    if is_utility(head):
        return "utility"
    if head in _INTERPRETERS and _INLINE_PROGRAM.search(command):
        return "inline-code"  # `ruby -e '...'`, `python -c '...'`: a program, not a command
    words = tool_words(command)
    arguments = " ".join(word for word in words[1:] if "/" not in word)
    if _SETUP_WORD.search(arguments) or _SETUP_WORD.search(head.rpartition("/")[2]):
        return "setup"
    if words[0] in _PACKAGE_MANAGERS and words[1:2] in (["i"], ["ci"]):
        return "setup"  # `pnpm i`, `npm ci`: an install by its short name
    if _INFO_ONLY.search(" " + stripped):
        return "info"
    return None


_CD_PREFIX = re.compile(r"cd\s+(?:\./)?([\w.@+-]+(?:/[\w.@+-]+)*)/?\s*&&\s*")


def _is_fragment(line: str) -> bool:
    """Whether `line` is part of a command, cut from the rest: an unclosed quote or
    parenthesis, a template's `{{ }}`, an operator left hanging (`make &&`), or an assignment
    in another shell's syntax (`$x = 1`, `matrix = '{}'`)."""
    if "{{" in line or "}}" in line or line.endswith(("&&", "||", "|", "\\", "(")):
        return True
    words = line.split()
    if len(words) > 1 and words[1] in ("=", "+=", ":="):
        return True
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", line)
    return "'" in unquoted or '"' in unquoted or unquoted.count("(") != unquoted.count(")")


def _path_reason(head: str, present: frozenset[str]) -> str | None:
    if _PATH.fullmatch(head) is None:
        return "prose"
    relative = head.removeprefix("./")
    if relative in present or relative.startswith(_INSTALLED_PATHS):
        return None
    folder = relative + "/"
    if any(path.startswith(folder) for path in present):
        return "folder"
    return "missing"
