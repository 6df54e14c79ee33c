"""Every name torch.Tensor has, pyc10.Tensor has too, unless it is in a deliberate category.

The categories (the README lists them as deliberate differences) are classified by rule, not by
hand-typed lists of hundreds of names: the math and autograd methods come from
pyc10/_torch_methods.py (data generated once from torch 2.13, checked here against
dir(torch.Tensor)), sparse/quantized/mkldnn/nested layouts by their names, and two short lists.
Those math and autograd names raise pyc10.C10AbsentMethodError, which is both the operators'
C10TypeError and an AttributeError (hasattr is False).
"""

from __future__ import annotations

import re

import pytest
import torch

import pyc10
from pyc10 import _torch_methods

#: torch's private names pyc10 has on purpose (views, refcounts, storages)
PRIVATE_NAMES = {"_base", "_is_view", "_use_count", "_typed_storage", "_version"}

# ---- the deliberately absent categories ----

#: math kernels (elementwise, reductions, comparisons, linear algebra, random fills, sorting,
#: gather/scatter and the copies that need a kernel): pyc10 is a runtime without math
MATH = _torch_methods.MATH_METHODS
#: autograd: pyc10 has no graph, hooks or gradients (requires_grad, grad, grad_fn, is_leaf,
#: detach, requires_grad_ exist, as constants)
AUTOGRAD = _torch_methods.AUTOGRAD_METHODS
#: layouts other than strided: sparse (COO, CSR, CSC, BSR, BSC), quantized, mkldnn, nested
#: (pyc10's is_sparse, is_quantized, is_mkldnn, is_nested exist and are False)
LAYOUTS = re.compile(
    r"sparse|quantiz|^q_|qscheme|dequantize|int_repr|indices$|^values$|coalesc|dense|mkldnn"
    r"|padded_tensor|^smm$|^sspaddmm$"
)
#: moving to backends libc10c has no allocator for (pyc10's is_xpu, is_mps, ... exist), and
#: torch.distributed's flag
BACKENDS = {"ipu", "xpu", "mtia", "is_distributed"}
#: torch integration points with no pyc10 counterpart: the legacy constructor new(),
#: torch.nn.Module's load hook, torch's subclassing protocol, and complex32 (chalf), which
#: libc10c knows as a dtype but pyc10 cannot convert to
OTHER = {"new", "module_load", "as_subclass", "chalf"}


def _category(name: str) -> str | None:
    if name in MATH:
        return "math"
    if name in AUTOGRAD:
        return "autograd"
    if LAYOUTS.search(name):
        return "layouts"
    if name in BACKENDS:
        return "backends"
    if name in OTHER:
        return "other"
    return None


def _torch_names() -> list[str]:
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_") or n in PRIVATE_NAMES)


def test_every_torch_tensor_name_exists_or_is_deliberately_absent() -> None:
    ours = {n for n in dir(pyc10.Tensor) if hasattr(pyc10.Tensor, n)}
    missing = [n for n in _torch_names() if n not in ours and _category(n) is None]
    assert not missing, f"torch.Tensor names pyc10.Tensor lacks, in no category: {missing}"


def test_categories_name_only_what_pyc10_lacks() -> None:
    ours = {n for n in dir(pyc10.Tensor) if hasattr(pyc10.Tensor, n)}
    listed = MATH | AUTOGRAD | BACKENDS | OTHER  # (the layout rule also matches is_sparse ...)
    present = sorted(listed & ours)
    assert not present, f"pyc10 has these names, drop them from the categories: {present}"


def test_the_math_and_autograd_lists_are_torchs_names() -> None:
    theirs = set(dir(torch.Tensor))
    assert not (MATH | AUTOGRAD) - theirs, sorted((MATH | AUTOGRAD) - theirs)
    assert not MATH & AUTOGRAD
    # a sample of what the lists must hold
    assert {"sum", "mean", "abs", "add_", "matmul", "sort", "eq", "clamp_"} <= MATH
    assert {"backward", "register_hook", "retain_grad"} <= AUTOGRAD


@pytest.mark.parametrize("name", ["sum", "mean", "abs", "add_", "matmul", "argmax", "where"])
def test_a_math_method_explains_itself_as_the_operators_do(name: str) -> None:
    t = pyc10.zeros(2, 3)
    with pytest.raises(pyc10.C10TypeError) as op:
        t + 1
    with pytest.raises(pyc10.C10AbsentMethodError) as e:
        getattr(t, name)
    assert isinstance(e.value, AttributeError) and isinstance(e.value, pyc10.C10TypeError)
    assert str(e.value) == str(op.value).replace("math operators (+)", f"math methods ({name})")
    assert e.value.name == name and e.value.obj is t


def test_an_autograd_method_explains_itself() -> None:
    t = pyc10.zeros(2)
    with pytest.raises(pyc10.C10AbsentMethodError, match=r"no autograd \(backward\)"):
        t.backward()
    with pytest.raises(AttributeError, match="without autograd"):
        t.register_hook(print)


def test_hasattr_and_getattr_defaults_stay_python_semantics() -> None:
    t = pyc10.zeros(2)
    assert not hasattr(t, "sum") and not hasattr(t, "backward") and not hasattr(t, "nonsense")
    assert getattr(t, "sum", 7) == 7
    assert hasattr(t, "view") and hasattr(t, "is_sparse")
    with pytest.raises(AttributeError) as e:
        t.nonsense  # noqa: B018
    assert type(e.value) is AttributeError
    assert str(e.value) == "'pyc10.Tensor' object has no attribute 'nonsense'"
    with pytest.raises(AttributeError, match="sum"):
        pyc10.Tensor.sum  # noqa: B018  (the class has no such attribute either)
    assert "sum" not in dir(t) and "view" in dir(t)


def test_device_flags_follow_torch() -> None:
    for name in ("is_xpu", "is_mps", "is_ipu", "is_vulkan", "is_xla", "is_maia", "is_mtia"):
        assert getattr(pyc10.zeros(1), name) is getattr(torch.zeros(1), name) is False
