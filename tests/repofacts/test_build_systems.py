"""Generated repositories of the build systems beyond Python, JavaScript, Rust and Go: the
canonical command comes first with the build's own wrapper, what CI runs leads, platform and
vendored folders never lead, nothing invented, and the digest is byte-identical across
processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit.repofacts import estimate_tokens, render_static_digest, scan_workspace

from ..conftest import committed_repo


def workflow(*commands: str) -> str:
    runs = "".join(f"      - run: {command}\n" for command in commands)
    return "name: CI\non: [push]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n" + runs


CI = ".github/workflows/ci.yml"

GRADLE = {
    "settings.gradle.kts": 'rootProject.name = "shop"\ninclude(":app", ":core")\n',
    "build.gradle.kts": "plugins {\n    alias(libs.plugins.spotless)\n}\n",
    "gradle/libs.versions.toml": '[plugins]\nspotless = { id = "com.diffplug.spotless" }\n',
    "gradlew": '#!/bin/sh\nexec java -jar gradle/wrapper/gradle-wrapper.jar "$@"\n',
    "gradle/wrapper/gradle-wrapper.properties": "distributionUrl=gradle-8.10-bin.zip\n",
    "app/build.gradle.kts": 'plugins { kotlin("jvm") }\n',
    "app/src/main/kotlin/App.kt": "fun main() {}\n",
    "core/build.gradle.kts": 'plugins { kotlin("jvm") }\n',
    "core/src/main/kotlin/Cart.kt": "class Cart\n",
}

MAVEN = {
    "pom.xml": (
        "<project><parent><artifactId>acme-parent</artifactId></parent>"
        "<artifactId>shop</artifactId><modules><module>core</module><module>web</module>"
        "</modules><build><plugins><plugin><artifactId>spotless-maven-plugin</artifactId>"
        "</plugin></plugins></build></project>\n"
    ),
    "mvnw": "#!/bin/sh\n",
    ".mvn/wrapper/maven-wrapper.properties": "distributionUrl=maven-3.9.9-bin.zip\n",
    "core/pom.xml": "<project><artifactId>core</artifactId></project>\n",
    "core/src/main/java/Cart.java": "class Cart {}\n",
    CI: workflow("./mvnw -B verify"),
}

CMAKE = {
    "CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.25)\nproject(geo CXX)\nenable_testing()\n"
        "add_executable(geo_test test/geo_test.cpp)\nadd_test(NAME geo COMMAND geo_test)\n"
    ),
    "CMakePresets.json": (
        '{"version": 6, "configurePresets": [{"name": "base", "hidden": true},'
        ' {"name": "dev", "inherits": "base", "binaryDir": "build"}],'
        ' "buildPresets": [{"name": "dev", "configurePreset": "dev"}],'
        ' "testPresets": [{"name": "dev", "configurePreset": "dev"}]}'
    ),
    "src/geo.cpp": "int area() { return 1; }\n",
    "test/geo_test.cpp": "int main() { return 0; }\n",
}

MESON = {
    "meson.build": "project('pixels', 'c')\nexecutable('pixels', 'src/main.c')\n",
    "meson.options": "option('docs', type: 'boolean', value: false)\n",
    "src/main.c": "int main(void) { return 0; }\n",
    CI: workflow("pip install meson ninja", "meson setup build", "meson test -C build"),
}

BAZEL = {
    "MODULE.bazel": 'module(name = "rpc", version = "1.0")\n',
    ".bazelversion": "7.4.0\n",
    "BUILD.bazel": 'cc_library(name = "rpc", srcs = ["rpc.cc"])\n',
    "rpc.cc": "int rpc() { return 0; }\n",
}

SWIFT_PACKAGE = {
    "Package.swift": (
        "// swift-tools-version:5.9\nimport PackageDescription\nlet package = Package(\n"
        '    name: "Clip",\n'
        '    targets: [.target(name: "Clip"), .testTarget(name: "ClipTests")]\n)\n'
    ),
    ".swiftlint.yml": "disabled_rules: [line_length]\n",
    "Sources/Clip/Clip.swift": "public struct Clip {}\n",
    "Tests/ClipTests/ClipTests.swift": "import XCTest\n",
    CI: workflow("swift test --parallel", "swiftlint lint --strict"),
}

XCODE = {
    "Notes.xcodeproj/project.pbxproj": "// !$*UTF8*$!\n{ archiveVersion = 1; }\n",
    "Notes.xcodeproj/xcshareddata/xcschemes/Notes.xcscheme": "<Scheme></Scheme>\n",
    "Notes/NotesApp.swift": "import SwiftUI\n",
}

FLUTTER_APP = {
    "pubspec.yaml": (
        "name: shop_app\nenvironment:\n  sdk: '>=3.4.0 <4.0.0'\n"
        "dependencies:\n  flutter:\n    sdk: flutter\n"
    ),
    "analysis_options.yaml": "include: package:flutter_lints/flutter.yaml\n",
    "lib/main.dart": "void main() {}\n",
    "test/widget_test.dart": "void main() {}\n",
    # The host projects Flutter generates for each platform.
    "android/build.gradle": "allprojects { repositories { google() } }\n",
    "android/settings.gradle": 'include ":app"\n',
    "android/app/build.gradle": "apply plugin: 'com.android.application'\n",
    "linux/CMakeLists.txt": "cmake_minimum_required(VERSION 3.13)\nproject(runner)\n",
    "windows/CMakeLists.txt": "cmake_minimum_required(VERSION 3.14)\nproject(runner)\n",
    CI: workflow("flutter pub get", "flutter analyze", "flutter test"),
}

DART_MELOS = {
    "pubspec.yaml": (
        "name: workspace\nenvironment:\n  sdk: ^3.6.0\nworkspace:\n  - packages/core\n"
        "melos:\n  scripts:\n    test: melos exec -- dart test\n"
        "    analyze:\n      run: dart analyze .\n"
    ),
    "packages/core/pubspec.yaml": "name: core\nresolution: workspace\n",
    "packages/core/lib/core.dart": "int one() => 1;\n",
}

ZIG = {
    "build.zig": (
        'const std = @import("std");\npub fn build(b: *std.Build) void {\n'
        '    const run_step = b.step("run", "Run the app");\n'
        '    const test_step = b.step("test", "Run unit tests");\n'
        "    _ = run_step;\n    _ = test_step;\n}\n"
    ),
    "build.zig.zon": '.{\n    .name = .ghost,\n    .version = "0.1.0",\n}\n',
    # A CMake file shipped for consumers of the C library: not this project's build.
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.19)\nproject(ghost_vt C)\n",
    "src/main.zig": "pub fn main() void {}\n",
    CI: workflow(
        "nix develop -c zig build test", "nix develop -c zig build -Doptimize=ReleaseFast"
    ),
}

DOTNET = {
    "Shop.sln": "Microsoft Visual Studio Solution File, Format Version 12.00\n",
    "global.json": '{"sdk": {"version": "8.0.100", "rollForward": "latestFeature"}}\n',
    "src/Shop/Shop.csproj": '<Project Sdk="Microsoft.NET.Sdk"></Project>\n',
    "src/Shop/Cart.cs": "class Cart {}\n",
    "tests/Shop.Tests/Shop.Tests.csproj": '<Project Sdk="Microsoft.NET.Sdk"></Project>\n',
    "tests/Shop.Tests/CartTests.cs": "class CartTests {}\n",
}

RUBY = {
    "Gemfile": 'source "https://rubygems.org"\ngemspec\ngem "rake"\ngem "rspec"\n'
    'gem "rubocop", require: false\n',
    "shop.gemspec": 'Gem::Specification.new do |spec|\n  spec.name = "shop"\nend\n',
    "Rakefile": (
        'require "rspec/core/rake_task"\nrequire "rubocop/rake_task"\n\n'
        "RSpec::Core::RakeTask.new(:spec)\nRuboCop::RakeTask.new\n\n"
        'namespace :db do\n  desc "Load the schema"\n  task :schema do\n  end\nend\n\n'
        "task default: %i[spec rubocop]\n"
    ),
    ".rubocop.yml": "AllCops:\n  NewCops: enable\n",
    "lib/shop.rb": "module Shop; end\n",
    "spec/shop_spec.rb": "RSpec.describe Shop do; end\n",
    "bin/setup": "#!/usr/bin/env bash\nbundle install\n",
    CI: workflow("bundle install", "bundle exec rake"),
}

PHP = {
    "composer.json": (
        '{"name": "acme/shop", "require": {"php": ">=8.2"},'
        ' "require-dev": {"phpunit/phpunit": "^11", "phpstan/phpstan": "^2",'
        ' "friendsofphp/php-cs-fixer": "^3"},'
        ' "scripts": {"test": "phpunit", "post-install-cmd": ["@php artisan key"]}}'
    ),
    "phpunit.xml.dist": "<phpunit/>\n",
    "phpstan.neon": "parameters:\n  level: 8\n",
    "src/Cart.php": "<?php\nclass Cart {}\n",
    "tests/CartTest.php": "<?php\nclass CartTest {}\n",
    CI: workflow("composer install --no-progress", "composer test", "vendor/bin/phpstan analyse"),
}

ELIXIR = {
    "mix.exs": (
        "defmodule Shop.MixProject do\n  use Mix.Project\n\n  def project do\n"
        '    [app: :shop, elixir: "~> 1.17", aliases: aliases(), deps: deps()]\n  end\n\n'
        '  defp deps do\n    [{:credo, "~> 1.7", only: [:dev, :test]}]\n  end\n\n'
        "  defp aliases do\n    [\n"
        '      precommit: ["compile --warnings-as-errors", "format", "test"],\n'
        '      setup: ["deps.get"]\n    ]\n  end\nend\n'
    ),
    ".formatter.exs": '[inputs: ["{mix,.formatter}.exs", "{lib,test}/**/*.{ex,exs}"]]\n',
    "lib/shop.ex": "defmodule Shop do\nend\n",
    "test/shop_test.exs": "defmodule ShopTest do\nend\n",
    CI: workflow("mix deps.get", "mix precommit"),
}

SBT = {
    "build.sbt": (
        "lazy val core = project\nlazy val api = project.dependsOn(core)\n"
        'addCommandAlias("fmtCheck", "scalafmtCheckAll; scalafmtSbtCheck")\n'
    ),
    ".scalafmt.conf": 'version = "3.8.3"\n',
    "project/build.properties": "sbt.version=1.10.2\n",
    "project/plugins.sbt": 'addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.2")\n',
    "core/src/main/scala/Cart.scala": "class Cart\n",
    CI: workflow("sbt test"),
}

NIX = {
    "flake.nix": (
        '{\n  description = "Dev tools";\n  outputs = { self, nixpkgs }: {\n'
        "    formatter.x86_64-linux = nixpkgs.legacyPackages.x86_64-linux.nixfmt;\n  };\n}\n"
    ),
    "pkgs/hello.nix": '{ stdenv }: stdenv.mkDerivation { name = "hello"; }\n',
}

DENO = {
    "deno.jsonc": (
        "{\n  // Tasks contributors run\n"
        '  "tasks": {\n    "test": "deno test -A",\n    "dev": "deno run -A --watch main.ts",\n'
        '  },\n  "imports": {"@std/assert": "jsr:@std/assert@^1"},\n}\n'
    ),
    "main.ts": "export const x = 1;\n",
    "main_test.ts": "Deno.test('x', () => {});\n",
    CI: workflow("deno task test", "deno fmt --check"),
}

BUN = {
    "package.json": (
        '{"name": "api", "scripts": {"test": "bun test", "lint": "biome check ."},'
        ' "devDependencies": {"@biomejs/biome": "2"}}'
    ),
    "bun.lock": '{"lockfileVersion": 1}\n',
    "src/index.ts": "export const x = 1\n",
    CI: workflow("bun install --frozen-lockfile", "bun run test"),
}

# (files, the first command line, the tool that leads the Tools line)
ECOSYSTEMS = {
    "gradle": (GRADLE, "- Test: `./gradlew test` (settings.gradle.kts)", "gradle"),
    "maven": (MAVEN, "- Test: `./mvnw -B verify` (.github/workflows/ci.yml; CI runs it)", "maven"),
    "cmake": (CMAKE, "- Test: `ctest --preset dev` (CMakeLists.txt)", "cmake"),
    "meson": (
        MESON,
        "- Test: `meson test -C build` (.github/workflows/ci.yml; CI runs it)",
        "meson",
    ),
    "bazel": (BAZEL, "- Test: `bazel test //...` (MODULE.bazel)", "bazel"),
    "swiftpm": (
        SWIFT_PACKAGE,
        "- Test: `swift test --parallel` (.github/workflows/ci.yml; CI",
        "swift",
    ),
    "xcode": (
        XCODE,
        "- Test: `xcodebuild -project Notes.xcodeproj -scheme Notes test` (Notes.xcodeproj/",
        "xcodebuild",
    ),
    "flutter": (
        FLUTTER_APP,
        "- Test: `flutter test` (.github/workflows/ci.yml; CI runs it)",
        "flutter",
    ),
    "melos": (
        DART_MELOS,
        "- Test: `melos run test` = `melos exec -- dart test` (pubspec.yaml)",
        "dart",
    ),
    "zig": (ZIG, "- Test: `zig build test` (build.zig; CI runs it)", "zig"),
    "dotnet": (DOTNET, "- Test: `dotnet test Shop.sln` (Shop.sln)", "dotnet"),
    "ruby": (
        RUBY,
        "- Test: `bundle exec rake` = `rake spec rubocop` (Rakefile; CI runs it)",
        "bundler",
    ),
    "php": (PHP, "- Test: `composer test` = `phpunit` (composer.json; CI runs it)", "composer"),
    "elixir": (
        ELIXIR,
        "- Test: `mix precommit` = `mix compile --warnings-as-errors` (mix.exs; CI",
        "mix",
    ),
    "sbt": (SBT, "- Test: `sbt test` (.github/workflows/ci.yml; CI runs it)", "sbt"),
    "nix": (NIX, "- Test: `nix flake check` (flake.nix)", "nix"),
    "deno": (DENO, "- Test: `deno task test` = `deno test -A` (deno.jsonc; CI runs it)", "deno"),
    "bun": (BUN, "- Test: `bun run test` = `bun test` (package.json; CI runs it)", "bun"),
}


Builder = Callable[[str], Path]


@pytest.fixture
def build(tmp_path: Path) -> Builder:
    def build(ecosystem: str) -> Path:
        return committed_repo(tmp_path / ecosystem, ECOSYSTEMS[ecosystem][0])

    return build


def digest_of(root: Path, budget: int = 100_000) -> str:
    return render_static_digest(scan_workspace(root), max_tokens=budget)


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_the_canonical_command_comes_first_with_the_builds_wrapper(
    build: Builder, ecosystem: str
) -> None:
    digest = digest_of(build(ecosystem))

    assert digest.split("\n")[1].startswith(ECOSYSTEMS[ecosystem][1])


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_the_projects_own_toolchain_leads_the_tools_line(build: Builder, ecosystem: str) -> None:
    facts = scan_workspace(build(ecosystem))

    assert facts.tools[0] == ECOSYSTEMS[ecosystem][2]


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
@pytest.mark.parametrize("budget", [120, 400])
def test_the_byte_budget_holds_and_keeps_the_canonical_command(
    build: Builder, ecosystem: str, budget: int
) -> None:
    digest = digest_of(build(ecosystem), budget)

    assert len(digest.encode("utf-8")) <= budget * 4
    assert estimate_tokens(digest) <= budget
    assert ECOSYSTEMS[ecosystem][1] in digest


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_the_digest_is_byte_identical_across_processes(build: Builder, ecosystem: str) -> None:
    root = build(ecosystem)
    script = (
        "import sys\nfrom promptkit.repofacts import render_static_digest, scan_workspace\n"
        "sys.stdout.buffer.write(render_static_digest(scan_workspace(sys.argv[1])).encode())\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(root)], check=True, capture_output=True
        ).stdout
        for _ in range(2)
    }

    assert outputs == {digest_of(root, 2000).encode()}


def test_a_flutter_apps_platform_folders_say_nothing_of_its_build(build: Builder) -> None:
    facts = scan_workspace(build("flutter"))
    commands = [command.command for command in facts.commands]

    assert "gradle" not in facts.tools
    assert "cmake" not in facts.tools
    assert not [command for command in commands if "gradle" in command or "cmake" in command]


def test_a_cmake_file_beside_a_zig_build_adds_no_invented_test_command(build: Builder) -> None:
    digest = digest_of(build("zig"))
    commands = digest.split("### Layout")[0]

    assert "ctest" not in commands
    assert "cmake" not in commands
    assert "- Build: `zig build -Doptimize=ReleaseFast` (.github/workflows/ci.yml; CI" in digest


def test_a_cmakelists_that_declares_no_tests_gets_no_ctest(tmp_path: Path) -> None:
    root = committed_repo(tmp_path / "lib", {"CMakeLists.txt": "project(lib C)\n"})

    commands = [command.command for command in scan_workspace(root).commands]

    assert commands == ["cmake -S . -B build && cmake --build build"]


def test_a_multi_project_build_names_its_projects_and_modules(build: Builder) -> None:
    gradle = scan_workspace(build("gradle")).projects
    maven = scan_workspace(build("maven")).projects

    assert gradle == (
        "Gradle build `shop` (wrapper `./gradlew`; projects :app, :core; settings.gradle.kts)",
    )
    assert maven == ("Maven project `shop` (wrapper `./mvnw`; modules core, web; pom.xml)",)


def test_each_ecosystems_checks_run_through_the_projects_own_runner(build: Builder) -> None:
    commands = {
        name: {command.command for command in scan_workspace(build(name)).commands}
        for name in ("ruby", "php", "elixir", "dotnet", "sbt", "deno")
    }

    assert {"bundle exec rspec", "bundle exec rubocop", "bundle exec rake db:schema"} <= (
        commands["ruby"]
    )
    assert {"vendor/bin/phpstan analyse", "vendor/bin/php-cs-fixer fix --dry-run --diff"} <= (
        commands["php"]
    )
    assert {"mix credo", "mix format --check-formatted", "mix precommit"} <= commands["elixir"]
    assert {"dotnet build Shop.sln", "dotnet test Shop.sln"} <= commands["dotnet"]
    assert {"sbt fmtCheck", "sbt scalafmtCheckAll"} <= commands["sbt"]
    assert {"deno task dev", "deno lint"} <= commands["deno"]


# A CI file and a contributor doc that name a folder, an unexpanded variable, installs, a
# command's output stored in a variable and a line cut short.
NOT_COMMANDS = {
    "Makefile": "test:\n\tpytest\n",
    "pyproject.toml": "[project]\nname = 'shop'\n[tool.ruff]\n",
    "artifacts/packages/README.md": "Built packages land here.\n",
    CI: workflow(
        "./artifacts/packages/",
        'docker build -t "${APP_NAME}" .',
        'for proj in core web; do pytest "$proj"; done',
        "uv pip install ruff",
        "out=$(nix build -L --print-out-paths)",
        'git diff "${{ github.event.pull_request.base.sha }}"',
        "make &&",
        "make test",
    ),
    "CONTRIBUTING.md": (
        "# Contributing\n\nPackages are written to `./artifacts/packages/` and\n"
        "`artifacts/packages`.\n\n```bash\nuv pip install ruff\npip install -e .\n"
        "pytest $TEST_ARGS\ncd artifacts && make test\nmake test\n```\n\n"
        "Run `ruff check .` before pushing, after `uv pip install ruff`.\n"
    ),
}


def test_folders_variables_and_installs_are_never_shown_as_commands(tmp_path: Path) -> None:
    root = committed_repo(tmp_path / "shop", NOT_COMMANDS)
    facts = scan_workspace(root)
    digest = render_static_digest(facts)

    commands = [command.command for command in facts.commands]
    workflows = digest.partition("### Workflows")[2].partition("### Watch-outs")[0]
    shown = digest.split("### Layout")[0] + workflows
    assert not [command for command in commands if "artifacts/packages" in command]
    assert not [command for command in commands if "$" in command or "install" in command]
    assert not [command for command in commands if "&&" in command or "print-out-paths" in command]
    not_commands = (
        "artifacts/packages",
        "APP_NAME",
        "$proj",
        "pip install",
        "TEST_ARGS",
        "nix build",
    )
    for text in not_commands:
        assert text not in shown
    assert "- Test: `make test` = `pytest` (Makefile; CI runs it)" in digest
    assert "`ruff check .`" in shown


def test_a_script_is_labelled_by_what_it_does_not_by_a_word_in_its_name(tmp_path: Path) -> None:
    files = {
        "scripts/update-types.sh": "#!/bin/sh\n",
        "scripts/prototype.sh": "#!/bin/sh\n",
        "scripts/check-types.sh": "#!/bin/sh\n",
        "scripts/test_imports.py": "print('ok')\n",
    }
    root = committed_repo(tmp_path / "labels", files)

    purposes = {command.command: command.purpose for command in scan_workspace(root).commands}

    assert purposes == {
        "./scripts/update-types.sh": "other",
        "./scripts/prototype.sh": "other",
        "./scripts/check-types.sh": "typecheck",
        "python scripts/test_imports.py": "test",
    }


BIN_SCRIPTS = {
    "pyproject.toml": "[project]\nname = 'algebra'\n[tool.pytest.ini_options]\n",
    "bin/test": "#!/usr/bin/env python\nfrom algebra.testing import test\ntest()\n",
    "bin/doctest": "#!/usr/bin/env python\nfrom algebra.testing import doctest\ndoctest()\n",
    "algebra/__init__.py": '"""Symbolic algebra."""\n',
    CI: workflow(
        "pip install -r requirements-dev.txt",
        "bin/test quality",
        "bin/doctest --force-colors",
        "pytest -n auto --timeout 10",
        "pytest -Werror -n auto",
        "pytest -m slow --timeout 595 -n auto",
    ),
    "CONTRIBUTING.md": "# Contributing\n\nRun `bin/test` and `bin/doctest` before you push.\n",
}


def test_a_projects_own_test_scripts_that_ci_runs_are_named(tmp_path: Path) -> None:
    digest = digest_of(committed_repo(tmp_path / "algebra", BIN_SCRIPTS), 2000)
    commands = digest.split("### Layout")[0]

    assert "- Test: `bin/test quality` (.github/workflows/ci.yml; CI runs it)" in commands
    assert "- Test: `./bin/doctest` (bin/; CI runs it)" in commands
    # Three spellings of pytest take one line, not the places of the project's own scripts.
    assert commands.count("`pytest ") == 1


def test_the_tasks_a_gradle_build_registers_run_through_its_wrapper(tmp_path: Path) -> None:
    files = {
        **GRADLE,
        "build.gradle.kts": (
            'plugins { id("com.diffplug.spotless") }\n'
            'tasks.register<Test>("integrationTest") { }\n'
            "val lintDocs by tasks.registering { }\n"
            'tasks.named("test") { }\n'
        ),
    }

    commands = {
        command.command: command.purpose
        for command in scan_workspace(committed_repo(tmp_path / "shop", files)).commands
    }

    assert commands["./gradlew integrationTest"] == "test"
    assert commands["./gradlew lintDocs"] == "lint"
    assert "./gradlew test" in commands
