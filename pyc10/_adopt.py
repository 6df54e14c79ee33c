"""pyc10.Tensor and pyc10.UntypedStorage: each one C type with its Python part added."""

from __future__ import annotations


def adopt(cls: type, base: type, c_name: str) -> type:
    """The C type base itself as cls, with the Python part (cls's body) moved onto it.

    One type and no Python subclass: a subclass instance is garbage-collected (tracked,
    untracked, ``subtype_dealloc``) and every C method checks it with ``PyType_IsSubtype``,
    which cost every view and factory about a quarter of its time. The class statement stays
    what type checkers read.

    torch's C methods live on ``torch._C.<c_name>`` (TensorBase, StorageBase), and CPython names
    them so in its arity errors ("TensorBase.detach() takes no arguments (1 given)"); a method
    descriptor keeps the qualified name it is first asked for, so it is asked under c_name.
    """
    name = base.__qualname__
    base.__qualname__ = c_name
    for value in vars(base).values():
        getattr(value, "__qualname__", None)
    base.__qualname__ = name
    for key, value in vars(cls).items():
        if key not in ("__module__", "__qualname__", "__slots__", "__dict__", "__weakref__"):
            setattr(base, key, value)
    return base
