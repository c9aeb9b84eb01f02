"""One JSON codec for the results document's dataclasses, derived from their fields.

:func:`encode` writes a dataclass as a JSON object, one key per field in field order;
:func:`decode` reads it back, guided by the field annotations (a nested dataclass, a tuple, a
``StrEnum``, ``X | None``; a type with ``from_json`` reads itself).  A field's ``metadata``
can say more, in the keys:

- ``"flat"``: the field is a dataclass whose fields are written at this level (with
  ``"prefix"`` before each name; ``"keys"``: only those of its fields); ``None`` writes them
  all as null, and reads back when they are all null or absent;
- ``"omit"``: the key is left out when the value is None;
- ``"read"``: a function of the whole JSON object that reads this field (when it depends on
  another key, as the evidence on the experiment's type);
- ``"rest"``: the field is a mapping of the keys no other field reads (a record's further
  keys, kept as written), written at this level.

A field with ``init=False`` is written, and computed again when read.  A key absent from the
object reads as the field's default (files written before the field existed).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from .jsonable import to_jsonable

__all__ = ["encode", "decode", "required"]


def encode(value: Any) -> dict:
    """The JSON object of the dataclass instance ``value`` (JSON-ready: :func:`to_jsonable`)."""
    out: dict[str, Any] = {}
    hints = _hints(type(value))
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        if "flat" in f.metadata:
            out.update(_flat(f, _non_none(hints[f.name]), item))
        elif "rest" in f.metadata:
            out.update(to_jsonable(item))
        elif item is not None or not f.metadata.get("omit"):
            out[f.name] = _plain(item)
    return out


def _plain(value: Any) -> Any:
    """``value`` as JSON: a dataclass without ``to_json`` encoded, containers item by item."""
    if dataclasses.is_dataclass(value) and not hasattr(value, "to_json"):
        return encode(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    return to_jsonable(value)


def _flat(f: dataclasses.Field, kind: type, value: Any) -> dict:
    """The keys of the flattened field ``f`` of type ``kind`` holding ``value`` (all null for
    None)."""
    prefix = f.metadata.get("prefix", "")
    names = _flat_names(f, kind)
    if value is None:
        return {prefix + name: None for name in names}
    return {prefix + name: _plain(getattr(value, name)) for name in names}


def _flat_names(f: dataclasses.Field, kind: type) -> tuple[str, ...]:
    return tuple(f.metadata.get("keys") or (g.name for g in dataclasses.fields(kind)))


def decode(cls: type, data: Mapping[str, Any]) -> Any:
    """An instance of the dataclass ``cls`` from its JSON object ``data``."""
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if "rest" in f.metadata:
            values[f.name] = {k: v for k, v in data.items() if k not in _names(cls)}
        elif "read" in f.metadata:
            values[f.name] = f.metadata["read"](data)
        elif "flat" in f.metadata:
            prefix, kind = f.metadata.get("prefix", ""), _non_none(hints[f.name])
            sub = {n: data[prefix + n] for n in _flat_names(f, kind) if prefix + n in data}
            optional = kind is not hints[f.name]
            if not (optional and all(v is None for v in sub.values())):
                values[f.name] = decode(kind, sub)
            elif f.default is dataclasses.MISSING:
                values[f.name] = None
        elif f.name in data:
            values[f.name] = _value(hints[f.name], data[f.name])
    return cls(**values)


def required(cls: type) -> list[str]:
    """The JSON keys an object of the dataclass ``cls`` must hold: those of its fields without
    a default (a flattened field's own required keys, prefixed; none for ``X | None``)."""
    hints, keys = _hints(cls), []
    for f in dataclasses.fields(cls):
        missing = dataclasses.MISSING
        if not f.init or f.default is not missing or f.default_factory is not missing:
            continue
        if "flat" in f.metadata:
            prefix = f.metadata.get("prefix", "")
            keys += [prefix + k for k in required(_non_none(hints[f.name]))]
        else:
            keys.append(f.name)
    return keys


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@cache
def _names(cls: type) -> frozenset[str]:
    """The JSON keys the fields of ``cls`` read (flattened fields' keys included)."""
    hints, names = _hints(cls), set()
    for f in dataclasses.fields(cls):
        if "flat" in f.metadata:
            kind = _non_none(hints[f.name])
            names.update(f.metadata.get("prefix", "") + n for n in _flat_names(f, kind))
        names.add(f.name)
    return frozenset(names)


def _non_none(kind: Any) -> Any:
    """``X`` of ``X | None`` (``kind`` itself otherwise)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return kind


def _value(kind: Any, value: Any) -> Any:
    """``value`` read from JSON as the annotation ``kind`` asks."""
    if value is None:
        return None
    kind = _non_none(kind)
    origin = typing.get_origin(kind)
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], v) for v in value)
        return tuple(_value(a, v) for a, v in zip(args, value, strict=True))
    if origin in (Mapping, dict) and isinstance(value, Mapping):
        item = typing.get_args(kind)[1] if typing.get_args(kind) else Any
        return {k: _value(item, v) for k, v in value.items()}
    if not isinstance(kind, type):
        return value
    if hasattr(kind, "from_json"):
        return kind.from_json(value)
    if dataclasses.is_dataclass(kind):
        return decode(kind, value)
    if issubclass(kind, enum.Enum):
        return kind(value)
    return value
