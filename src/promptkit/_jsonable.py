"""Any value as JSON values: the one conversion sessions, execution records, spans, reports and the
REPL use, so a value reads the same wherever it is written.

`json_ready(value)` turns models, dataclasses, dates, paths, enums, sets and tuples into what
JSON holds (pydantic's rules); NaN and infinity become null, and an object nothing knows how to
convert becomes its repr, so recording a value never fails. `json.dumps` of the result needs no
`default=`.
"""

from __future__ import annotations

from typing import Any


def json_ready(value: Any) -> Any:
    """`value` as JSON values only; unknown objects become their repr."""
    # Imported here: the base modules stay cheap to import, and pydantic_core is not.
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(value, fallback=repr, inf_nan_mode="null")
    except Exception:  # a value whose own serialiser fails is recorded by its repr instead
        return repr(value)
