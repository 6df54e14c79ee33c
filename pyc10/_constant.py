"""The base of pyc10's named constants (dtypes, layouts, memory formats)."""

from __future__ import annotations

from typing import Any

__all__ = ["Constant"]


class Constant:
    """One object per value, printed ``pyc10.<name>`` and pickled and copied as itself.

    Users never construct one: the library's values are made once, at import.
    """

    __slots__ = ("_name",)

    _name: str

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"cannot create 'pyc10.{cls.__name__}' instances")

    def __repr__(self) -> str:
        return f"pyc10.{self._name}"

    __str__ = __repr__

    def __reduce__(self) -> str:
        # Pickled by name: unpickling finds the singleton pyc10.<name>.
        return self._name

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self
