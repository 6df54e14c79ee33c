"""pyc10.device against torch.device: grammar, messages, forms of construction, equality."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
import torch
from _oracle import needs_torch_cpu_build

import pyc10

VALID = [
    "cpu",
    "cuda",
    "cpu:0",
    "cuda:0",
    "cuda:1",
    "cuda:12",
    "cuda:127",
    "meta",
    "meta:0",
    "privateuseone:1",
    "xla:3",
    "mps",
    "hpu:0",
    "ve",
    "lazy",
    "ipu",
    "mtia:2",
    "maia",
    "xpu:1",
    "hip",
    "fpga",
    "vulkan",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "cpu:1",
]
INVALID = [
    "",
    "cuda:01",
    "cuda:00",
    "cuda:-1",
    "cuda:",
    "cuda:a",
    "cuda:0:1",
    ":0",
    "cuda 0",
    "cu da",
    "cuda_0",
    "cuda:1x",
    "cuda:+1",
    "cuda: 1",
    " cuda",
    "cuda:0 ",
    "cpu:-1",
    "cpu:x",
    "::",
    ":",
    "metal",
    "CPU",
    "Cuda",
    "foo",
    "foo:1",
    "gpu:0",
    "cuda:cuda",
    "cpu:0:",
    "cuda:99999999999",
    "_",
    "cuda_",
    "cuda\u00e9",
    "c\u0301pu",
    "cuda:\u0661",
]


def torch_outcome(*args):
    try:
        return ("ok", torch.device(*args))
    except Exception as e:
        return (type(e), str(e))


def check_same(*args):
    t = torch_outcome(*args)
    if t[0] == "ok":
        d = pyc10.device(*args)
        assert (d.type, d.index) == (t[1].type, t[1].index)
        assert str(d) == str(t[1])
        assert repr(d) == repr(t[1])
    else:
        with pytest.raises(t[0]) as info:
            pyc10.device(*args)
        assert str(info.value) == t[1]
        assert isinstance(info.value, pyc10.C10Error)


@pytest.mark.parametrize("s", VALID)
def test_valid_strings_parse_as_torch(s):
    check_same(s)


@pytest.mark.parametrize("s", INVALID)
def test_invalid_strings_raise_torchs_error(s):
    check_same(s)


def test_random_strings_agree_with_torch():
    rng = random.Random(1234)
    alphabet = "cpudameta:0123456789_ -x"
    for _ in range(3000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        t = torch_outcome(s)
        if t[0] == "ok" and t[1].index is not None and not 0 <= t[1].index <= 127:
            continue  # torch wrapped an index above 127; covered by the next test
        if t[0] == "ok" and ":" in s and int(s.split(":")[1]) > 127:
            continue
        check_same(s)


@pytest.mark.parametrize("s", ["cuda:128", "cuda:255", "cuda:256", "cpu:300", "meta:2147483647"])
def test_index_above_127_is_an_error_where_torch_wraps(s):
    t = torch.device(s)
    assert t.index is None or t.index != int(s.split(":")[1])  # torch truncated it
    with pytest.raises(
        RuntimeError, match=r"Device index \d+ is out of range \(the largest is 127\)"
    ):
        pyc10.device(s)


@pytest.mark.parametrize(
    "args",
    [
        ("cuda", 1),
        ("cuda", 0),
        ("cpu", 0),
        ("cpu", 1),
        ("meta", 3),
        ("cuda", None),
        ("cuda", -1),
        ("cuda", -2),
        ("cuda:0", 1),
        ("cuda:0", None),
        ("foo", 1),
        ("cuda", 127),
    ],
)
def test_type_and_index_forms(args):
    check_same(*args)


@pytest.mark.parametrize(
    "args",
    [
        ("cuda", 1.5),
        ("cuda", "1"),
        ("cuda", True),
        (1.5,),
        (None,),
        (torch.device("cpu"), 1),
        (b"cuda", 1.0),
    ],
)
def test_wrong_argument_types_raise_type_error(args):
    with pytest.raises(TypeError):
        torch.device(*args)
    with pytest.raises(TypeError):
        pyc10.device(*args)


def test_index_above_127_with_explicit_index():
    with pytest.raises(RuntimeError, match="Device index 128 is out of range"):
        pyc10.device("cuda", 128)
    with pytest.raises(RuntimeError, match="Device index 1099511627776 is out of range"):
        pyc10.device("cuda", 2**40)


@needs_torch_cpu_build
def test_integer_means_the_accelerator_which_is_absent():
    check_same(0)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {"type": "cuda:1"}),
        ((), {"type": "cuda"}),
        (("cuda:1",), {"index": None}),
        ((), {"type": "cuda", "index": None}),
        (("cuda:1",), {"index": 2}),
        ((), {}),
        (("cuda", 1, 2), {}),
        (("cuda",), {"type": "cpu"}),
        (("cuda",), {"bogus": 1}),
    ],
)
def test_keyword_forms_match_torch(args, kwargs):
    try:
        t = ("ok", torch.device(*args, **kwargs))
    except Exception as e:
        t = (type(e), str(e))
    if t[0] == "ok":
        assert pyc10.device(*args, **kwargs) == pyc10.device(str(t[1]))
    else:
        with pytest.raises(t[0]):
            pyc10.device(*args, **kwargs)


def test_keywords_bytes_and_device_arguments():
    assert pyc10.device(type="cuda", index=2) == pyc10.device("cuda:2")
    assert pyc10.device(b"cuda:1") == pyc10.device("cuda:1")
    d = pyc10.device("xla:2")
    assert pyc10.device(d) is d


def test_equality_hash_pickle():
    a, b = pyc10.device("cuda:1"), pyc10.device("cuda", 1)
    assert a == b and hash(a) == hash(b)
    assert pyc10.device("cpu") != pyc10.device("cpu", 0)
    assert a != "cuda:1"
    assert len({pyc10.device(s) for s in ["cpu", "cpu", "cuda", "cuda:0"]}) == 3
    for d in (a, pyc10.device("cpu")):
        assert pickle.loads(pickle.dumps(d)) == d
        assert copy.deepcopy(d) is d
    assert type(a).__module__ == "pyc10"


PRIVATEUSE1_SCRIPT = r"""
import torch, pyc10

def outcome(make, *args):
    try:
        d = make(*args)
        return ("ok", d.type, d.index, str(d), repr(d))
    except RuntimeError as e:
        return ("RuntimeError", str(e))

assert pyc10.get_privateuse1_backend_name() == "privateuseone"
before = pyc10.device("privateuseone:3")
for name in ["cuda", "hip"]:
    try:
        torch.utils.rename_privateuse1_backend(name)
    except RuntimeError as e:
        expected = str(e)
    try:
        pyc10.rename_privateuse1_backend(name)
    except RuntimeError as e:
        assert str(e) == expected, (str(e), expected)
    else:
        raise AssertionError("renaming to an in-tree name succeeded")
torch.utils.rename_privateuse1_backend("foo")
pyc10.rename_privateuse1_backend("foo")
pyc10.rename_privateuse1_backend("foo")
assert pyc10.get_privateuse1_backend_name() == "foo"
assert str(before) == "foo:3" and before.type == "foo"
for s in ["foo", "foo:1", "privateuseone:2", "FOO", "fo", "foo:01", "foo:x"]:
    a, b = outcome(torch.device, s), outcome(pyc10.device, s)
    assert a == b, (s, a, b)
for args in [("foo", 3), ("privateuseone", 4)]:
    a, b = outcome(torch.device, *args), outcome(pyc10.device, *args)
    assert a == b, (args, a, b)
try:
    torch._C._rename_privateuse1_backend("bar")
except RuntimeError as e:
    expected = str(e)
try:
    pyc10.rename_privateuse1_backend("bar")
except RuntimeError as e:
    assert str(e) == expected
else:
    raise AssertionError("a second name was accepted")
print("ok")
"""


def test_privateuse1_rename_matches_torch(tmp_path):
    # Renaming is process-wide and permanent, so it runs in a fresh interpreter.
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", PRIVATEUSE1_SCRIPT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_rename_privateuse1_backend_rejects_non_strings():
    with pytest.raises(TypeError):
        pyc10.rename_privateuse1_backend(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 to 26 characters"):
        pyc10.rename_privateuse1_backend("no spaces")
