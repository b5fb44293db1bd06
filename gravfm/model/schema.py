"""Building frozen configuration dataclasses from parsed TOML, with exact error messages.

Each configuration class of the model inherits :class:`FromDict`, whose ``from_dict`` checks the
keys against the dataclass fields: a missing required key or an unknown (e.g. misspelled) key is
refused with a :class:`~gravfm.errors.ConfigError` that names the key and where it was expected.
Field types are read from the annotations, so the schema is the dataclass itself.
"""

import dataclasses
import difflib
import types
import typing

from ..errors import ConfigError

__all__ = ["FromDict", "child_location", "in_si"]


def child_location(where, name):
    """Location of ``name`` inside ``where``: ``file [table.key]``."""
    if where.endswith("]"):
        return f"{where[:-1]}.{name}]"
    return f"{where} [{name}]"


def _describe(value):
    return f"{value!r} ({type(value).__name__})"


def _convert(value, kind, where):
    """Check ``value`` against the annotation ``kind`` and return it converted."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(kind) if option is not type(None)]
        if value is None:
            return None
        return _convert(value, options[0], where)
    if origin is typing.Literal:
        choices = typing.get_args(kind)
        if value not in choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(repr, choices))}")
        return value
    if origin is tuple:
        item_kind = typing.get_args(kind)[0]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {_describe(value)}")
        return tuple(_convert(item, item_kind, f"{where}[{index}]") for index, item in enumerate(value))
    if origin is dict:
        key_kind, item_kind = typing.get_args(kind)
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table, got {_describe(value)}")
        return {_convert(key, key_kind, where): _convert(item, item_kind, child_location(where, key))
                for key, item in value.items()}
    if dataclasses.is_dataclass(kind):
        return kind.from_dict(value, where=where)
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {_describe(value)}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {_describe(value)}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {_describe(value)}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {_describe(value)}")
        return value
    raise TypeError(f"schema: unsupported annotation {kind!r} at {where}")


class FromDict:
    """Mixin giving a frozen dataclass a checked ``from_dict`` constructor."""

    @classmethod
    def from_dict(cls, data, *, where=None):
        """Build an instance from a mapping of field name to value.

        Parameters
        ----------
        data : dict
            Keys are the dataclass's field names. Fields with a default may be left out.
        where : str, optional
            Where the mapping came from (file and table), used in error messages.

        Raises
        ------
        ConfigError
            A required key is missing, a key is unknown, or a value has the wrong type or range.
        """
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a table, got {_describe(data)}")
        fields = {field.name: field for field in dataclasses.fields(cls) if field.init}
        hints = typing.get_type_hints(cls)
        for key in data:
            if key not in fields:
                close = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(f"{where}: unknown key {key!r}{hint}; "
                                  f"expected keys: {', '.join(fields)}")
        values = {}
        for name, field in fields.items():
            required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            if name not in data:
                if required:
                    raise ConfigError(f"{where}: missing key {name!r}")
                continue
            values[name] = _convert(data[name], hints[name], child_location(where, name))
        try:
            return cls(**values)
        except ConfigError as error:  # a range check of the class: say which file and table
            raise ConfigError(f"{where}: {error}") from None


def in_si(key, convert, doc):
    """A read-only property: the field ``key`` (its unit in its name) converted to SI units."""
    return property(lambda self: convert(getattr(self, key)), doc=doc)
