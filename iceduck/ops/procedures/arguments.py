"""A CALL's arguments bound to its procedure's parameters, as Spark binds them.

Positional arguments take the parameters in order; named ones (``name => value``, names
case-insensitive) any order; the two cannot be mixed (:mod:`iceduck.sql.call` refuses
that). A required parameter missing, an unknown name or too many arguments is an error
naming the procedure and its parameters. A ``NULL`` argument counts as not given.

Values are converted to the parameter's type as Spark's analyzer casts them: a timestamp
parameter takes ``TIMESTAMP '...'``, a string, or any expression DuckDB evaluates to a
point in time (``now() - INTERVAL 7 DAY``), and becomes epoch milliseconds in the session's
time zone; numbers take integer literals or expressions; ``array(...)`` and ``map(...)``
take constants of their element types.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from iceduck.engine import queries
from iceduck.engine.types import quote_string
from iceduck.errors import UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure
from iceduck.sql.call import BoundParameter, CallStatement, Unevaluated


def bind_arguments(ctx: OpContext, procedure: Procedure, call: CallStatement) -> Arguments:
    """``call``'s arguments as ``procedure``'s parameters (see the module docstring)."""
    by_name = {p.name: p for p in procedure.parameters}
    given: dict[str, Any] = {}
    if call.named:
        unknown = [a.name for a in call.arguments if a.name not in by_name]
        if unknown:
            raise UserError(
                f"{procedure.name} has no parameter {unknown[0]} (it takes {_listed(procedure)})"
            )
        pairs = [(by_name[a.name], a.value) for a in call.arguments if a.name is not None]
    else:
        if len(call.arguments) > len(procedure.parameters):
            raise UserError(
                f"{procedure.name} takes at most {len(procedure.parameters)} arguments "
                f"({_listed(procedure)}), {len(call.arguments)} given"
            )
        pairs = list(zip(procedure.parameters, (a.value for a in call.arguments), strict=False))
    for parameter, value in pairs:
        value = _bound(ctx.params, value)
        if value is not None:
            given[parameter.name] = convert(ctx, procedure.name, parameter, value)
    missing = [p.name for p in procedure.parameters if p.required and p.name not in given]
    if missing:
        raise UserError(f"{procedure.name} is missing required parameters: {', '.join(missing)}")
    return Arguments(procedure.name, given)


def _bound(params: Any, value: Any) -> Any:
    """``value`` with each statement parameter in it (an argument, an array element, a map
    key or value) replaced by the value bound to it."""
    if isinstance(value, BoundParameter):
        return _parameter(params, value.key)
    if isinstance(value, list):
        return [_bound(params, v) for v in value]
    if isinstance(value, dict):
        return {_bound(params, k): _bound(params, v) for k, v in value.items()}
    return value


def _parameter(params: Any, key: int | str) -> Any:
    """The value of statement parameter ``key`` (1-based position, or a name)."""
    try:
        if isinstance(key, int):
            if isinstance(params, dict):
                return params[str(key)]
            return params[key - 1]
        return params[key]
    except (KeyError, IndexError, TypeError):
        shown = key if isinstance(key, int) else f"${key}"
        raise UserError(f"no value was given for parameter {shown}") from None


def _listed(procedure: Procedure) -> str:
    return ", ".join(p.name + ("" if p.required else "?") for p in procedure.parameters) or "no arguments"


def convert(ctx: OpContext, procedure: str, parameter: Parameter, value: Any) -> Any:
    """``value`` as ``parameter``'s type; a UserError naming the parameter otherwise."""
    converter = _CONVERTERS[parameter.kind]
    try:
        return converter(ctx, value)
    except (TypeError, ValueError) as e:
        raise UserError(
            f"{procedure}: {parameter.name} takes a {parameter.kind.value}, not {_shown(value)} ({e})"
        ) from e


def _shown(value: Any) -> str:
    return value.sql if isinstance(value, Unevaluated) else repr(value)


def _string(ctx: OpContext, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or isinstance(value, list | dict) or isinstance(value, Unevaluated):
        raise TypeError("a string literal is expected")
    return str(value)


def _long(ctx: OpContext, value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError("a boolean is no number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return int(value.strip())
    if isinstance(value, Unevaluated):
        ((result,),) = queries.rows(ctx.duck, f"SELECT CAST(({value.sql}) AS BIGINT)")
        if result is None:
            raise ValueError("it is NULL")
        return int(result)
    raise TypeError("an integer is expected")


def _int(ctx: OpContext, value: Any) -> int:
    number = _long(ctx, value)
    if not -(2**31) <= number < 2**31:
        raise ValueError("out of the int range")
    return number


def _boolean(ctx: OpContext, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise TypeError("true or false is expected")


def _timestamp(ctx: OpContext, value: Any) -> int:
    params = None
    if isinstance(value, Unevaluated):
        sql = value.sql
    elif isinstance(value, str):
        sql = quote_string(value)
    elif isinstance(value, datetime.datetime | datetime.date):  # a bound parameter
        sql, params = "$1", [value]
    else:
        raise TypeError("a timestamp such as TIMESTAMP '2024-01-31 00:00:00' is expected")
    millis = queries.epoch_ms(ctx.duck, sql, params)
    if millis is None:
        raise ValueError("it is NULL")
    return millis


def _array(element: Callable[[OpContext, Any], Any]) -> Callable[[OpContext, Any], list[Any]]:
    def convert_array(ctx: OpContext, value: Any) -> list[Any]:
        if not isinstance(value, list):
            value = [value]  # Spark casts a single value to a one-element array
        return [element(ctx, v) for v in value]

    return convert_array


def _string_map(ctx: OpContext, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError("map('key', 'value', ...) is expected")
    return {_string(ctx, k): _string(ctx, v) for k, v in value.items()}


_CONVERTERS: dict[Kind, Callable[[OpContext, Any], Any]] = {
    Kind.STRING: _string,
    Kind.LONG: _long,
    Kind.INT: _int,
    Kind.BOOLEAN: _boolean,
    Kind.TIMESTAMP: _timestamp,
    Kind.LONG_ARRAY: _array(_long),
    Kind.STRING_ARRAY: _array(_string),
    Kind.STRING_MAP: _string_map,
}
