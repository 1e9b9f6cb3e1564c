"""Another server's JSON schema for a tool's arguments, checked on our side before the call.

A provider's strict mode carries only part of a schema (`promptkit.adapters` moves bounds and
formats it cannot enforce into descriptions), and a model may send arguments that break it
anyway. `ArgumentsSchema` checks them with `jsonschema`, in the dialect the schema names (JSON
Schema 2020-12 when it names none, as MCP specifies), so the model reads what is wrong in the
words of any other tool's validation error and the server never sees the call. A schema that
is not valid JSON Schema is refused when the section is built; a `$ref` that cannot be resolved
within the schema (nothing is ever fetched) leaves the check to the server.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from promptkit.errors import PromptValidationError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

MAX_PROBLEMS = 10
"""The most problems one answer lists: the model fixes the first ones and calls again."""
_MAX_PROBLEM_CHARS = 200


@dataclass(frozen=True)
class ArgumentsSchema:
    """A server tool's input schema, compiled once: `problems(arguments)` says what is wrong."""

    validator: Validator

    @classmethod
    def compile(cls, schema: Mapping[str, Any], *, tool: str, server: str) -> ArgumentsSchema:
        """The checker of `schema`; PromptValidationError when it is not a JSON schema."""
        from jsonschema import validators
        from jsonschema.exceptions import SchemaError

        document = dict(schema)
        with warnings.catch_warnings():
            # A `$schema` jsonschema does not know is read as the latest dialect; say nothing.
            warnings.simplefilter("ignore", DeprecationWarning)
            kind = validators.validator_for(document, default=validators.Draft202012Validator)
        try:
            kind.check_schema(document)
        except SchemaError as error:
            raise PromptValidationError(
                f"{server}: the input schema of tool {tool!r} is not a valid JSON schema"
                f" ({_clipped(error.message)}): leave the tool out with include="
            ) from None
        return cls(kind(document))

    def problems(self, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with `arguments` (`path: message; ...`, as promptkit describes any
        tool's invalid arguments), or None when they match or cannot be checked here."""
        from jsonschema.exceptions import relevance
        from referencing.exceptions import Unresolvable

        try:
            errors = sorted(self.validator.iter_errors(arguments), key=relevance, reverse=True)
        except Unresolvable:
            return None
        except RecursionError:
            return "<root>: the arguments are nested too deeply"
        if not errors:
            return None
        return "; ".join(
            f"{'.'.join(str(part) for part in error.absolute_path) or '<root>'}:"
            f" {_clipped(error.message)}"
            for error in errors[:MAX_PROBLEMS]
        )


def _clipped(text: str) -> str:
    # jsonschema quotes the offending value: a long one would crowd out the other problems.
    return text if len(text) <= _MAX_PROBLEM_CHARS else f"{text[: _MAX_PROBLEM_CHARS - 3]}..."
