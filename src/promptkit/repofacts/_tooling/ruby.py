"""Ruby: Gemfile (Bundler), a gem's gemspec and executables, and the Rakefile's tasks.

With a Gemfile, tools run through `bundle exec` (the versions the lockfile pins). The Rakefile's
tasks are read by their declarations (`task :name`, `desc`, `namespace`, the test tasks
`Rake::TestTask`, `RSpec::Core::RakeTask` and `RuboCop::RakeTask` define), and `rake` alone runs
the `default` task, which says what it is for by what it runs. The gems a Gemfile or gemspec
names tell the linters and test frameworks (`rspec`, `minitest`, `rubocop`, `standard`, `sorbet`).
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import CommandPurpose, classify_command, classify_name

__all__ = ["parse_gemfile", "parse_gemspec", "parse_rakefile"]

_GEM = re.compile(
    r"""^\s*(?:gem|spec\.add_(?:development_)?dependency)\s*\(?\s*["']([\w-]+)""", re.M
)
# Gems whose command is a check, and how it runs under Bundler.
_GEM_COMMANDS: tuple[tuple[str, str, CommandPurpose, str], ...] = (
    ("rspec", "rspec", "test", "rspec"),
    ("rspec-rails", "rspec", "test", "rspec"),
    ("rubocop", "rubocop", "lint", "rubocop"),
    ("standard", "standard", "lint", "standardrb"),
    ("sorbet", "sorbet", "typecheck", "srb tc"),
    ("steep", "steep", "typecheck", "steep check"),
)
_TASK = re.compile(
    r"""^\s*(?:task|multitask)\s*\(?\s*(?::(\w+)|["']([\w:-]+)["']|(\w+):)""", re.MULTILINE
)
_NAMESPACE = re.compile(r"""^(\s*)namespace\s*\(?\s*(?::(\w+)|["']([\w:-]+)["'])""")
_DEFINED_TASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Rake::TestTask\.new(?:\s*\(\s*:?[\"']?(\w+))?"), "test"),
    (re.compile(r"RSpec::Core::RakeTask\.new(?:\s*\(\s*:?[\"']?(\w+))?"), "spec"),
    (re.compile(r"RuboCop::RakeTask\.new(?:\s*\(\s*:?[\"']?(\w+))?"), "rubocop"),
)
_DEFAULT = re.compile(r"""^\s*task\s*\(?\s*(?::default\s*=>|default:)\s*(.+)$""", re.MULTILINE)
_GEMSPEC_NAME = re.compile(r"""\.name\s*=\s*["']([\w-]+)["']""")


def parse_gemfile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """Gemfile: Bundler runs the project's tools; the gems it names that check say how."""
    collector.tools.add("bundler")
    collector.programs.update(("bundle", "ruby", "rake", "gem"))
    gems = set(_GEM.findall(text))
    for name in _gemspecs(collector, directory):
        gems.update(_GEM.findall(collector.read(name) or ""))
    _gem_checks(collector, gems, source, directory)


def parse_gemspec(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """A gemspec: the gem's name, and the executables it ships in `exe/` (Bundler's layout),
    which run in development as `bundle exec <name>` (the checkout's version, not an
    installed one)."""
    name = _GEMSPEC_NAME.search(text)
    collector.project("Ruby gem", name.group(1) if name else None, [], source)
    folder = f"{directory}/exe/" if directory else "exe/"
    for path in sorted(collector.present):
        executable = path.removeprefix(folder)
        if path.startswith(folder) and "/" not in executable and "." not in executable:
            command = f"bundle exec {executable}"
            collector.add(classify_command(command), command, source, directory=directory)


def parse_rakefile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """Rakefile: each task it declares, through `bundle exec` when a Gemfile is near, and
    `rake` alone for the default task, labelled by the tasks it runs."""
    collector.tools.add("rake")
    rake = "bundle exec rake" if collector.has_near(directory, "Gemfile") else "rake"
    collector.programs.update(("rake", *rake.split()[:1]))
    tasks = _rake_tasks(text)
    for task in tasks:
        if task != "default":
            collector.add(classify_name(task), f"{rake} {task}", source, directory=directory)
    default = _DEFAULT.search(text)
    if default is not None:
        # `[:spec, :rubocop]`, `%i[spec rubocop]`, `:spec`, `"spec"`
        listed = re.sub(r"%[iwIW]\[", "[", default.group(1))
        runs = [name.lstrip(":") for name in re.findall(r":?\w[\w:-]*", listed)]
        purposes = [classify_name(name) for name in runs]
        purpose: CommandPurpose = next((p for p in purposes if p != "other"), "other")
        detail = "rake " + " ".join(runs) if runs else None
        collector.add(purpose, rake, source, detail, directory=directory)


def _rake_tasks(text: str) -> list[str]:
    """The tasks a Rakefile declares, namespaced (`db:migrate`), in order, each once."""
    found: list[str] = []
    namespaces: list[tuple[int, str]] = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if namespaces and line.strip() == "end" and indent == namespaces[-1][0]:
            namespaces.pop()
            continue
        space = _NAMESPACE.match(line)
        if space is not None:
            namespaces.append((len(space.group(1)), space.group(2) or space.group(3)))
            continue
        task = _TASK.match(line)
        name = next((part for part in task.groups() if part), None) if task else None
        for pattern, default_name in _DEFINED_TASKS:
            defined = pattern.search(line)
            if defined is not None:
                name = defined.group(1) or default_name
        if name is not None:
            qualified = ":".join([*(space for _, space in namespaces), name])
            if qualified not in found:
                found.append(qualified)
    return found


def _gemspecs(collector: ToolingCollector, directory: str) -> list[str]:
    prefix = f"{directory}/" if directory else ""
    return sorted(
        path
        for path in collector.present
        if path.startswith(prefix)
        and path.count("/") == prefix.count("/")
        and path.endswith(".gemspec")
    )[:2]


def _gem_checks(collector: ToolingCollector, gems: set[str], source: str, directory: str) -> None:
    # Minitest runs through the Rakefile's test task, not a command of its own.
    if "minitest" in gems:
        collector.tools.add("minitest")
    for gem, tool, purpose, command in _GEM_COMMANDS:
        if gem in gems:
            collector.programs.add(command.split()[0])
            collector.add_default(tool, purpose, f"bundle exec {command}", source, directory)
