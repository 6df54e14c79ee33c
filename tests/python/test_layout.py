"""Layouts and memory formats against torch's objects."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch

import pyc10

LAYOUT_NAMES = [
    "strided",
    "sparse_coo",
    "sparse_csr",
    "_mkldnn",
    "sparse_csc",
    "sparse_bsr",
    "sparse_bsc",
    "jagged",
]
FORMAT_NAMES = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_layouts_exist_with_torchs_names(name):
    ours, theirs = getattr(pyc10, name), getattr(torch, name)
    assert isinstance(ours, pyc10.layout)
    assert repr(ours) == repr(theirs).replace("torch.", "pyc10.")
    assert ours.value == LAYOUT_NAMES.index(name)


def test_layout_values_follow_c10_via_tensors():
    # torch does not expose Layout numbers; the c10 name of each tensor's layout must be ours.
    t = torch.zeros(2, 2)
    for tensor, name in [
        (t, "strided"),
        (t.to_sparse(), "sparse_coo"),
        (t.to_sparse_csr(), "sparse_csr"),
        (t.to_sparse_csc(), "sparse_csc"),
        (t.to_sparse_bsr((1, 1)), "sparse_bsr"),
        (t.to_sparse_bsc((1, 1)), "sparse_bsc"),
    ]:
        assert repr(tensor.layout) == repr(getattr(pyc10, name)).replace("pyc10.", "torch.")


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_memory_formats_exist_with_torchs_names(name):
    ours, theirs = getattr(pyc10, name), getattr(torch, name)
    assert isinstance(ours, pyc10.memory_format)
    assert repr(ours) == repr(theirs).replace("torch.", "pyc10.")
    assert ours.value == FORMAT_NAMES.index(name)


def test_singletons_survive_pickle_and_copy():
    for obj in (pyc10.strided, pyc10.sparse_csr, pyc10.channels_last, pyc10.preserve_format):
        assert pickle.loads(pickle.dumps(obj)) is obj
        assert copy.copy(obj) is obj
    with pytest.raises(TypeError):
        pyc10.layout()
    with pytest.raises(TypeError):
        pyc10.memory_format()
