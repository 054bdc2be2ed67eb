"""The JSON form of events: dataclasses and enums to JSON-able values and back.

`to_json` turns an event (or any value inside one: a Verdict, a Usage, an enum) into what
`json.dumps` writes as one line of the log, the event's `kind` first; `from_json` turns a
current-schema record back into its event class (kgb.tracking.events.EVENT_TYPES). Older
records are upgraded before (kgb.tracking.log.upgrade). See docs/event-log.md.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any

from kgb.tracking.events import EVENT_TYPES, Event

# --- encoding: dataclasses and enums to JSON-able values and back -------------------

PLAIN = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """A dataclass's field names (None for other types), looked up once per class."""
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def to_json(value: Any) -> Any:
    cls = type(value)
    if cls in PLAIN:
        return value
    names = _field_names(cls)
    if names is not None:
        out = {name: to_json(getattr(value, name)) for name in names}
        if isinstance(value, Event):
            out = {"kind": value.kind, **out}
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def _identity(value: Any) -> Any:
    return value


@functools.cache
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """A function that turns the JSON value of type `tp` back into it, worked out once per
    type: resolving a dataclass's field types costs more than decoding an event, and a
    rebuild decodes every event of every log."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) != 1:
            return _identity
        one = _decoder(inner[0])
        return lambda v: None if v is None else one(v)
    if origin in (tuple, list):
        item = _decoder(typing.get_args(tp)[0])
        return lambda v: None if v is None else origin(item(x) for x in v)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return lambda v: None if v is None else tp(v)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = {f.name: _decoder(hints[f.name]) for f in dataclasses.fields(tp)}
        # plain values (str, int, dicts of them) need no call per field
        plain = {name for name, decode in fields.items() if decode is _identity}

        def decode(v: Any) -> Any:
            if v is None:
                return None
            return tp(**{k: x if k in plain else fields[k](x) for k, x in v.items() if k in fields})

        return decode
    return _identity


def from_json(record: dict[str, Any]) -> Event:
    """Decode one current-schema record into its event class."""
    cls = EVENT_TYPES.get(record.get("kind", ""))
    if cls is None:
        raise ValueError(f"unknown event kind {record.get('kind')!r}")
    return _decoder(cls)(record)


__all__ = ["to_json", "from_json"]
