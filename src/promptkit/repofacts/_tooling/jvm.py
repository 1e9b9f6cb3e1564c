"""JVM builds: Gradle (wrapper, subprojects, plugins, the tasks its build script registers), Maven
(wrapper, modules, plugins), sbt and Mill.

A build is run through its wrapper when the repository holds one (`./gradlew`, `./mvnw`,
`./mill`): the wrapper pins the version CI uses. Checks that plugins add are offered only for a
plugin the build applies: a Gradle plugin named in a build script, the settings or the version
catalog (`gradle/libs.versions.toml`), a Maven plugin in the POM, an sbt plugin in
`project/plugins.sbt`.
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import CommandPurpose, classify_name

__all__ = ["parse_gradle", "parse_maven", "parse_mill", "parse_sbt"]

_GRADLE_SETTINGS = ("settings.gradle.kts", "settings.gradle")
_GRADLE_BUILDS = ("build.gradle.kts", "build.gradle")
_GRADLE_INCLUDE = re.compile(r"""^\s*include\s*\(?((?:\s*["'][^"']+["']\s*,?)+)""", re.MULTILINE)
_QUOTED = re.compile(r"""["']([^"']+)["']""")
_ROOT_NAME = re.compile(r"""rootProject\.name\s*=\s*["']([^"']+)["']""")
_Tasks = tuple[tuple[CommandPurpose, str], ...]
# Plugins that add checks, by a word of their id: the tool and the tasks it adds.
_GRADLE_PLUGIN_TASKS: tuple[tuple[str, str, _Tasks], ...] = (
    ("spotless", "spotless", (("format", "spotlessCheck"), ("format", "spotlessApply"))),
    ("detekt", "detekt", (("lint", "detekt"),)),
    ("ktlint", "ktlint", (("lint", "ktlintCheck"),)),
    ("checkstyle", "checkstyle", (("lint", "checkstyleMain"),)),
    ("com.android.application", "android-lint", (("lint", "lint"),)),
)
# A task the build script registers: `tasks.register("x")`, `tasks.register<Copy>("x")`,
# `val x by tasks.registering`, Groovy's `task x` / `task('x')`.
_GRADLE_TASK = re.compile(
    r"""tasks\.register(?:<[\w.]+>)?\(\s*["']([\w:-]+)["']|"""
    r"""\bval\s+(\w+)\s+by\s+tasks\.registering|"""
    r"""^\s*task\s*\(?\s*["']?(\w+)["']?\s*(?:[(){,]|$)""",
    re.MULTILINE,
)
_MAVEN_MODULE = re.compile(r"<module>\s*([^<\s]+)\s*</module>")
_MAVEN_ARTIFACT = re.compile(r"<artifactId>\s*([^<\s]+)\s*</artifactId>")
_MAVEN_PLUGIN_GOALS: tuple[tuple[str, _Tasks], ...] = (
    ("spotless-maven-plugin", (("format", "spotless:check"), ("format", "spotless:apply"))),
    ("maven-checkstyle-plugin", (("lint", "checkstyle:check"),)),
    ("formatter-maven-plugin", (("format", "formatter:validate"),)),
)
_SBT_ALIAS = re.compile(r"""addCommandAlias\s*\(\s*"([\w:-]+)"\s*,\s*"([^"]*)\"""")
_SBT_PROJECT = re.compile(r"^\s*lazy\s+val\s+(\w+)\s*=\s*(?:project|\(project)", re.MULTILINE)


def parse_gradle(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """A Gradle settings or build script: the build's subprojects, the plugins it applies and
    the tasks they add, run through `./gradlew` when the wrapper is there.

    A directory's settings script describes its build; a build script with no settings beside
    it is a build of its own. Both read the version catalog for the plugins they apply.
    """
    name = source.rpartition("/")[2]
    if name in _GRADLE_BUILDS and any(collector.has(directory, s) for s in _GRADLE_SETTINGS):
        return  # the settings script beside it speaks for the build
    if directory and any(collector.has("", settings) for settings in _GRADLE_SETTINGS):
        return  # a subproject of the root's build
    gradle = "./gradlew" if collector.has(directory, "gradlew") else "gradle"
    collector.tools.add("gradle")
    collector.programs.update((gradle, "gradle"))
    texts, build = _gradle_texts(collector, directory, name, text)
    everything = "\n".join(texts)
    collector.note_dependencies(everything)
    projects = [
        project
        for found in _GRADLE_INCLUDE.finditer(text)
        for project in _QUOTED.findall(found.group(1))
    ]
    root_name = _ROOT_NAME.search(text)
    facts = [f"wrapper `{gradle}`"] if gradle.startswith("./") else []
    if projects:
        shown = ", ".join(projects[:4]) + (
            f" and {len(projects) - 4} more" if len(projects) > 4 else ""
        )
        facts.append(f"projects {shown}")
    collector.project("Gradle build", root_name.group(1) if root_name else None, facts, source)
    collector.add_default("gradle", "test", f"{gradle} test", source, directory)
    collector.add_default("gradle", "build", f"{gradle} build", source, directory)
    # The build script registers the project's own tasks (`./gradlew koverReport`).
    for task in dict.fromkeys(next(filter(None, found)) for found in _GRADLE_TASK.findall(build)):
        collector.add(classify_name(task), f"{gradle} {task}", source, directory=directory)
    for marker, tool, tasks in _GRADLE_PLUGIN_TASKS:
        if marker in everything:
            collector.tools.add(tool)
            for purpose, task in tasks:
                collector.add_default("gradle", purpose, f"{gradle} {task}", source, directory)


def _gradle_texts(
    collector: ToolingCollector, directory: str, name: str, text: str
) -> tuple[list[str], str]:
    """The texts of a build's scripts and version catalog (`text`, read as `name`, first),
    and the text of its build script."""
    texts = [text]
    build = text if name in _GRADLE_BUILDS else ""
    prefix = f"{directory}/" if directory else ""
    for other in (*_GRADLE_BUILDS, "gradle/libs.versions.toml", "build-logic/build.gradle.kts"):
        if other != name and collector.has(directory, other):
            texts.append(collector.read(prefix + other) or "")
            if other in _GRADLE_BUILDS and not build:
                build = texts[-1]
    return texts, build


def parse_maven(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """pom.xml: the project, its modules and the checks its plugins add, run through `./mvnw`
    when the wrapper is there. A module's POM belongs to the root's build."""
    if directory and collector.has("", "pom.xml"):
        return
    maven = "./mvnw" if collector.has(directory, "mvnw") else "mvn"
    collector.tools.add("maven")
    collector.programs.update((maven, "mvn"))
    # The project's own artifactId follows its parent's: the first one outside <parent>.
    without_parent = re.sub(r"<parent>.*?</parent>", "", text, count=1, flags=re.DOTALL)
    artifact = _MAVEN_ARTIFACT.search(without_parent)
    modules = _MAVEN_MODULE.findall(text)
    facts = [f"wrapper `{maven}`"] if maven.startswith("./") else []
    if modules:
        shown = ", ".join(modules[:4]) + (
            f" and {len(modules) - 4} more" if len(modules) > 4 else ""
        )
        facts.append(f"modules {shown}")
    collector.project("Maven project", artifact.group(1) if artifact else None, facts, source)
    collector.add_default("maven", "test", f"{maven} test", source, directory)
    collector.add_default("maven", "build", f"{maven} package", source, directory)
    for plugin, goals in _MAVEN_PLUGIN_GOALS:
        if plugin in text:
            collector.tools.add(plugin.split("-")[0])
            for purpose, goal in goals:
                collector.add_default("maven", purpose, f"{maven} {goal}", source, directory)


def parse_sbt(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """build.sbt: its subprojects, its command aliases (`sbt <alias>`) and scalafmt."""
    collector.tools.add("sbt")
    collector.programs.add("sbt")
    projects = _SBT_PROJECT.findall(text)
    facts = [f"{len(projects)} subprojects"] if len(projects) > 1 else []
    collector.project("sbt build", None, facts, source)
    for alias, expansion in _SBT_ALIAS.findall(text):
        collector.add(classify_name(alias), f"sbt {alias}", source, expansion, directory=directory)
    collector.add_default("sbt", "test", "sbt test", source, directory)
    collector.add_default("sbt", "build", "sbt compile", source, directory)
    # The sbt-scalafmt plugin adds the task; a `.scalafmt.conf` alone may serve an editor.
    plugins = collector.read(
        f"{directory}/project/plugins.sbt" if directory else "project/plugins.sbt"
    )
    if plugins is not None and "sbt-scalafmt" in plugins:
        collector.add_default("scalafmt", "format", "sbt scalafmtCheckAll", source, directory)


def parse_mill(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """A Mill build (`build.mill`, `build.sc`): every module's tests and compilation, through
    the `./mill` launcher when the repository holds it."""
    mill = "./mill" if collector.has(directory, "mill") else "mill"
    collector.tools.add("mill")
    collector.programs.update((mill, "mill"))
    collector.project("Mill build", None, [], source)
    collector.add_default("mill", "test", f"{mill} __.test", source, directory)
    collector.add_default("mill", "build", f"{mill} __.compile", source, directory)
