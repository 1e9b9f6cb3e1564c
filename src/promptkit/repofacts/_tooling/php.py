"""PHP: composer.json (its scripts and the tools it installs), and the tools' configuration.

Composer installs a project's tools under `vendor/bin/` (or the `bin-dir` its config names), so
a tool is run by that path: `vendor/bin/phpunit`. A tool is offered when the project requires
it for development or holds its configuration file (`phpunit.xml.dist`, `phpstan.neon`,
`.php-cs-fixer.dist.php`...). A composer script runs as `composer <script>`, and a Symfony or
Laravel application's console as `php bin/console` or `php artisan`.
"""

from __future__ import annotations

import json
from typing import Any

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import CommandPurpose, classify_name

__all__ = ["parse_composer"]

# (package, configuration files, tool, purpose, command under the bin folder)
_TOOLS: tuple[tuple[str, tuple[str, ...], str, CommandPurpose, str], ...] = (
    ("phpunit/phpunit", ("phpunit.xml", "phpunit.xml.dist"), "phpunit", "test", "phpunit"),
    ("pestphp/pest", (), "pest", "test", "pest"),
    ("phpstan/phpstan", ("phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon"), "phpstan",
     "lint", "phpstan analyse"),
    ("vimeo/psalm", ("psalm.xml", "psalm.xml.dist"), "psalm", "typecheck", "psalm"),
    ("friendsofphp/php-cs-fixer", (".php-cs-fixer.php", ".php-cs-fixer.dist.php"),
     "php-cs-fixer", "format", "php-cs-fixer fix --dry-run --diff"),
    ("laravel/pint", ("pint.json",), "pint", "format", "pint --test"),
    ("squizlabs/php_codesniffer", ("phpcs.xml", "phpcs.xml.dist", ".phpcs.xml.dist"), "phpcs",
     "lint", "phpcs"),
    ("rector/rector", ("rector.php",), "rector", "lint", "rector --dry-run"),
)  # fmt: skip


def parse_composer(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return
    if not isinstance(document, dict):
        return
    collector.tools.add("composer")
    collector.programs.update(("composer", "php"))
    name = document.get("name")
    requires = {
        **_mapping(document.get("require")),
        **_mapping(document.get("require-dev")),
    }
    php = _mapping(document.get("require")).get("php")
    facts = [f"php {php}"] if isinstance(php, str) else []
    collector.project("PHP package", name, facts, source)
    scripts = _mapping(document.get("scripts"))
    for script, body in scripts.items():
        if script.startswith(("pre-", "post-")):
            continue  # composer's event hooks, run by composer itself
        first = body[0] if isinstance(body, list) and body else body
        detail = first if isinstance(first, str) else None
        collector.add(
            classify_name(script), f"composer {script}", source, detail, directory=directory
        )
    # A Symfony application runs its commands through `bin/console`, a Laravel one through
    # `artisan`: the console every task of the application goes through.
    for console in ("bin/console", "artisan"):
        if collector.has(directory, console):
            collector.add("other", f"php {console}", source, directory=directory)
    bin_dir = _mapping(document.get("config")).get("bin-dir")
    folder = bin_dir.strip("/") if isinstance(bin_dir, str) and bin_dir.strip("/") else "vendor/bin"
    for package, configs, tool, purpose, command in _TOOLS:
        if package in requires or any(collector.has(directory, config) for config in configs):
            collector.programs.add(f"{folder}/{command.split()[0]}")
            collector.add_default(tool, purpose, f"{folder}/{command}", source, directory)


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
