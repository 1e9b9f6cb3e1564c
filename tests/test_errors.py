"""The error hierarchy: every error is a caller's mistake or a run-time failure, never both,
and each also subclasses the builtin it stands for so existing `except` clauses keep working."""

from __future__ import annotations

import inspect

import pytest

from promptkit import errors
from promptkit.errors import PromptkitError, RunError, UsageError

ERROR_CLASSES = [
    value
    for _, value in inspect.getmembers(errors, inspect.isclass)
    if issubclass(value, PromptkitError) and value not in {PromptkitError, UsageError, RunError}
]
BUILTINS = (ValueError, TypeError, OSError, TimeoutError, RuntimeError)


@pytest.mark.parametrize("error", ERROR_CLASSES, ids=lambda error: error.__name__)
def test_every_error_is_either_a_usage_error_or_a_run_error(error: type[Exception]) -> None:
    assert issubclass(error, UsageError) != issubclass(error, RunError)


@pytest.mark.parametrize("error", ERROR_CLASSES, ids=lambda error: error.__name__)
def test_every_error_also_subclasses_a_builtin(error: type[Exception]) -> None:
    assert issubclass(error, BUILTINS)


def test_a_usage_error_is_caught_by_an_existing_except_value_error() -> None:
    with pytest.raises(ValueError, match="bad key"):
        raise errors.PromptValidationError("bad key")


def test_a_provider_timeout_is_caught_by_except_timeout_error() -> None:
    with pytest.raises(TimeoutError) as raised:
        raise errors.ProviderTimeoutError("deadline passed", status=408, request_id="req_1")

    assert isinstance(raised.value, errors.ProviderTimeoutError)
    assert (raised.value.status, raised.value.request_id) == (408, "req_1")


def test_an_unreachable_provider_is_caught_by_except_connection_error() -> None:
    with pytest.raises(ConnectionError, match="no route"):
        raise errors.ProviderConnectionError("no route")


def test_a_workspace_error_keeps_its_message_as_an_os_error() -> None:
    error = errors.WorkspaceError("src/a.py escapes the workspace /w: use a relative path")

    assert isinstance(error, OSError)
    assert str(error) == "src/a.py escapes the workspace /w: use a relative path"
