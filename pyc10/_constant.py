"""The base of pyc10's named constants (dtypes, layouts, memory formats)."""

from __future__ import annotations

from typing import Any

from ._errors import no_arguments

__all__ = ["Constant"]


class Constant:
    """One object per value, printed ``pyc10.<name>`` and pickled and copied as itself.

    Users never construct one: the library's values are made once, at import.
    """

    __slots__ = ("_name",)

    _name: str

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"cannot create 'pyc10.{cls.__name__}' instances")

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        if args or kwargs:  # torch's constants are C types: their slot wrapper's words
            no_arguments(f"{type(self).__name__}.__repr__", args, kwargs, slot=True)
        return f"pyc10.{self._name}"

    def __str__(self, *args: Any, **kwargs: Any) -> str:
        if args or kwargs:
            no_arguments(f"{type(self).__name__}.__str__", args, kwargs, slot=True)
        return f"pyc10.{self._name}"

    def __reduce__(self) -> str:
        # Pickled by name: unpickling finds the singleton pyc10.<name>.
        return self._name

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self
