"""``repr``, ``str`` and ``format`` of a tensor as torch prints them, and the print options.

A port of torch/_tensor_str.py (``_str_intern`` and its helpers) and of ``Tensor.__format__``
(torch/_tensor.py), working on the tensor's values read into numpy: dtypes numpy lacks are
widened exactly first (bfloat16 and float8 to float32, complex32 to complex64), which gives the
formatter the same Python numbers torch's gets. Torch's quirks are kept on purpose:
float8_e8m0fnu, which has no zero, counts values equal to ``0`` converted to it (2**-127) as
zeros and NaN as finite; float4_e2m1fn_x2 prints its bytes as uint8 values.

The tensor type calls :func:`tensor_repr`, :func:`tensor_str` and :func:`tensor_format`; they
use only its public methods (``dtype``, ``device``, ``shape``, ``dim``, ``numel``, ``stride``,
``cpu``, ``to``, ``view``, ``numpy``, ``item``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from . import _defaults
from ._dtype import DTYPE_NAMES, WIDENED
from ._errors import C10TypeError, torch_type_name

__all__ = [
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_format",
    "tensor_repr",
    "tensor_str",
]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(  # noqa: PLR0917  (torch's signature: all positional)
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options for printing tensors, as ``torch.set_printoptions``.

    Args:
        precision: digits after the point for floating point values (default 4).
        threshold: element count past which a tensor is summarised with ``...`` (1000).
        edgeitems: items kept at each end of a summarised dimension (3).
        linewidth: characters per line before a line break (80).
        profile: ``"default"``, ``"short"`` or ``"full"``: all of the above at once, then
            overridden by those given.
        sci_mode: True or False to force or forbid scientific notation; None (the default,
            set again by every call that does not give it) lets the values decide.

    As torch's, values are not checked: a bad one fails when a tensor is printed.

    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = math.inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keywords for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Set print options for the duration of a ``with`` block (torch._tensor_str's)."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


_E8M0 = DTYPE_NAMES["float8_e8m0fnu"]
_FLOAT4 = DTYPE_NAMES["float4_e2m1fn_x2"]
_UINT8 = DTYPE_NAMES["uint8"]
_INT64 = DTYPE_NAMES["int64"]
_BOOL = DTYPE_NAMES["bool"]
_E8M0_ZERO = 2.0**-127  # what 0 becomes in float8_e8m0fnu (its smallest value)
_QUANTIZED = frozenset(
    DTYPE_NAMES[n] for n in ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")
)


class _Formatter:
    """torch's _Formatter: one width and one mode (int, fixed or scientific) for all values.

    ``values``: the (summarised) elements as Python numbers; ``floating``: whether the dtype is
    a floating one; ``e8m0``: float8_e8m0fnu's rules for which values count.
    """

    def __init__(  # noqa: PLR0912  (torch's code, kept in its shape to compare)
        self, values: list[Any], floating: bool, e8m0: bool = False
    ) -> None:
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        if not self.floating_dtype:
            for value in values:
                value_str = f"{value}"
                self.max_width = max(self.max_width, len(value_str))
            return

        if e8m0:  # isfinite() holds for every e8m0 value, NaN too; ne(0) compares with 2**-127
            nonzero_finite_vals = [v for v in values if v != _E8M0_ZERO]
        else:
            nonzero_finite_vals = [v for v in values if math.isfinite(v) and v != 0]

        if not nonzero_finite_vals:
            # no valid number, do nothing
            return

        nonzero_finite_abs = [abs(v) for v in nonzero_finite_vals]
        if any(math.isnan(v) for v in nonzero_finite_abs):  # torch's min and max propagate NaN
            nonzero_finite_min = nonzero_finite_max = math.nan
        else:
            nonzero_finite_min = min(nonzero_finite_abs)
            nonzero_finite_max = max(nonzero_finite_abs)

        for value in nonzero_finite_vals:
            if math.isnan(value) or value != math.ceil(value):
                self.int_mode = False
                break

        self.sci_mode = (
            nonzero_finite_max / nonzero_finite_min > 1000.0
            or nonzero_finite_max > 1.0e8
            or nonzero_finite_min < 1.0e-4
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )

        if self.int_mode:
            # in int_mode for floats, all numbers are integers, and we append a decimal to
            # nonfinites to indicate that the tensor is of floating type. add 1 to the len to
            # account for this.
            if self.sci_mode:
                for value in nonzero_finite_vals:
                    value_str = f"{{:.{PRINT_OPTS.precision}e}}".format(value)
                    self.max_width = max(self.max_width, len(value_str))
            else:
                for value in nonzero_finite_vals:
                    value_str = f"{value:.0f}"
                    self.max_width = max(self.max_width, len(value_str) + 1)
        elif self.sci_mode:
            for value in nonzero_finite_vals:
                value_str = f"{{:.{PRINT_OPTS.precision}e}}".format(value)
                self.max_width = max(self.max_width, len(value_str))
        else:
            for value in nonzero_finite_vals:
                value_str = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
                self.max_width = max(self.max_width, len(value_str))

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(real_str: str, imag_str: str) -> str:
    # handles negative numbers, +0.0, -0.0
    imag_str = (imag_str + "j").lstrip()
    if imag_str[0] == "+" or imag_str[0] == "-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _scalar_str(a: Any, formatter1: _Formatter, formatter2: _Formatter | None = None) -> str:
    if formatter2 is not None:
        return _complex_str(formatter1.format(a.real.item()), formatter2.format(a.imag.item()))
    return formatter1.format(a.item())


def _vector_str(
    a: Any, indent: int, summarize: bool, formatter1: _Formatter, formatter2: _Formatter | None
) -> str:
    # length includes spaces and comma between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        # width for imag_formatter + an extra j for complex
        element_length += formatter2.width() + 1

    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (element_length)))

    def _val_formatter(val: Any) -> str:
        if formatter2 is not None:
            return _complex_str(formatter1.format(val.real), formatter2.format(val.imag))
        return formatter1.format(val)

    edgeitems = PRINT_OPTS.edgeitems
    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edgeitems:
        data = (
            [_val_formatter(val) for val in a[:edgeitems].tolist()]
            + [" ..."]
            + [_val_formatter(val) for val in a[-edgeitems:].tolist()]
        )
    else:
        data = [_val_formatter(val) for val in a.tolist()]

    data_lines = [data[i : i + elements_per_line] for i in range(0, len(data), elements_per_line)]
    lines = [", ".join(line) for line in data_lines]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(
    a: Any,
    indent: int,
    summarize: bool,
    formatter1: _Formatter,
    formatter2: _Formatter | None = None,
) -> str:
    dim: int = a.ndim

    if dim == 0:
        return _scalar_str(a, formatter1, formatter2)

    if dim == 1:
        return _vector_str(a, indent, summarize, formatter1, formatter2)

    edgeitems = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edgeitems:
        slices = (
            [
                _tensor_str_with_formatter(a[i], indent + 1, summarize, formatter1, formatter2)
                for i in range(edgeitems)
            ]
            + ["..."]
            + [
                _tensor_str_with_formatter(a[i], indent + 1, summarize, formatter1, formatter2)
                for i in range(n - edgeitems, n)
            ]
        )
    else:
        slices = [
            _tensor_str_with_formatter(a[i], indent + 1, summarize, formatter1, formatter2)
            for i in range(n)
        ]

    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _summarized_data(a: Any) -> Any:
    """Torch's get_summarized_data: the elements a summarised print shows."""
    import numpy as np

    dim: int = a.ndim
    edgeitems = PRINT_OPTS.edgeitems
    if dim == 0:
        return a
    if dim == 1:
        if a.shape[0] > 2 * edgeitems:
            return np.concatenate((a[:edgeitems], a[-edgeitems:]))
        return a
    if not edgeitems:
        return a[(slice(0, 0),) * dim]
    if a.shape[0] > 2 * edgeitems:
        start = [a[i] for i in range(edgeitems)]
        end = [a[i] for i in range(len(a) - edgeitems, len(a))]
        return np.stack([_summarized_data(x) for x in (start + end)])
    return np.stack([_summarized_data(x) for x in a])


def _values(a: Any, summarize: bool) -> list[Any]:
    """The Python numbers a formatter measures."""
    return list((_summarized_data(a) if summarize else a).reshape(-1).tolist())


def _tensor_str(a: Any, d: Any, indent: int) -> str:
    """The bracketed values of a non-empty tensor read into the numpy array ``a``."""
    summarize = a.size > PRINT_OPTS.threshold
    if d.is_complex:
        real_formatter = _Formatter(_values(a.real, summarize), True)
        imag_formatter = _Formatter(_values(a.imag, summarize), True)
        return _tensor_str_with_formatter(a, indent, summarize, real_formatter, imag_formatter)
    formatter = _Formatter(_values(a, summarize), d.is_floating_point, e8m0=d is _E8M0)
    return _tensor_str_with_formatter(a, indent, summarize, formatter)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, force_newline: bool) -> str:
    """Torch's _add_suffixes: a suffix that would pass the line width goes on its own line."""
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1  # (sic, torch's arithmetic)
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def _host_values(t: Any) -> Any:
    """The elements in a numpy array that holds the same numbers, or None where none can.

    float4_e2m1fn_x2 as its bytes (uint8), as torch prints it. An access the library refuses
    (a storage shrunk under the tensor) raises its error, as every other read does.
    """
    if t.device.type != "cpu":
        try:
            t = t.cpu()
        except RuntimeError:  # a device no copy reaches yet
            return None
    try:
        if t.dtype is _FLOAT4:
            return t.view(_UINT8).numpy()
        wider = WIDENED.get(t.dtype._name)
        return (t.to(DTYPE_NAMES[wider]) if wider is not None else t).numpy()
    except (TypeError, NotImplementedError):  # dtypes numpy cannot hold: bits, sub-byte ints
        return None


def _metadata_repr(t: Any) -> str:
    """The metadata repr, where torch's cannot be given.

    Quantized tensors (torch prints their quantizer, which pyc10 does not have), and elements
    of the bits and sub-byte integer dtypes (torch raises: it cannot read them).
    """
    return (
        f"pyc10.Tensor(shape={list(t.shape)}, stride={list(t.stride())}, "
        f"dtype={t.dtype!r}, device='{t.device}')"
    )


def tensor_repr(t: Any) -> str:
    """``repr(t)`` as torch's: ``tensor([[0., 1.], ...], dtype=pyc10.float64)``.

    The device comes first among the suffixes when it is not the CPU (torch's Note [Print
    tensor device]); the dtype is named unless it is the default dtype, the complex dtype
    that goes with it, int64 or bool (an empty tensor names any dtype but the default).
    Quantized tensors, and tensors of the bits and sub-byte integer dtypes with elements, get
    a metadata repr instead (``pyc10.Tensor(shape=[2], stride=[1], ...)``).
    """
    d = t.dtype
    if d in _QUANTIZED:
        return _metadata_repr(t)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":  # the default device: pyc10 has no other one yet
        suffixes.append(f"device='{t.device}'")
    default = _defaults.current()
    has_default_dtype = d in (default, _defaults.default_complex(), _INT64, _BOOL)
    if t.device.type == "meta":
        suffixes.append(f"size={tuple(t.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        tensor_str = "..."
    elif t.numel() == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        # In an empty tensor, there are no elements to infer if the dtype should be int64,
        # so it must be shown explicitly.
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        tensor_str = "[]"
    else:
        a = _host_values(t)
        if a is None:
            return _metadata_repr(t)
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={d!r}")
        tensor_str = _tensor_str(a, d, indent)
    return _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=False)


def tensor_str(t: Any) -> str:
    """``str(t)``: the same text as ``repr(t)``, as torch's."""
    return tensor_repr(t)


def tensor_format(t: Any, spec: str) -> str:
    """``format(t, spec)`` and f-strings, as torch's ``Tensor.__format__``.

    A 0-dim tensor (not on the meta device) formats its element: ``f"{t}"`` is ``"2.5"`` and
    ``f"{t:.2f}"`` ``"2.50"``. Any other tensor prints ``str(t)`` for an empty spec and
    raises TypeError for another, and for a spec that is not a str, by ``object.__format__``.
    """
    if t.dim() == 0 and t.device.type != "meta":
        return str(t.item().__format__(spec))
    if not isinstance(spec, str):  # object.__format__'s words (CPython's _PyArg_BadArgument)
        got = "None" if spec is None else torch_type_name(spec)
        raise TypeError(f"__format__() argument must be str, not {got}")
    if spec:
        raise C10TypeError(f"unsupported format string passed to {type(t).__name__}.__format__")
    return str(t)
