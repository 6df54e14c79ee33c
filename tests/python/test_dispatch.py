"""DispatchKey and DispatchKeySet against torch._C (c10 itself): values, names, parsing, set
algebra, iteration order, priorities, alias keys and the keys of real tensors."""

from __future__ import annotations

import pickle
import random
import subprocess
import sys

import pytest
import torch

import pyc10
from pyc10 import DispatchKey, DispatchKeySet
from pyc10._lib import ffi, lib

C = torch._C
TK = C.DispatchKey


def torch_set(*names):
    ks = C.DispatchKeySet(TK.Undefined)
    for n in names:
        ks = ks | C.DispatchKeySet(getattr(TK, n))
    return ks


def ours_set(*names):
    return DispatchKeySet(*(DispatchKey[n] for n in names))


def test_every_torch_key_has_our_value_and_name():
    for name, key in TK.__members__.items():
        assert DispatchKey[name] == int(key), name
        if not name.startswith("StartOf"):  # block placeholders print as "Undefined" ...
            assert C._dispatch_key_name(key) == DispatchKey[name].name


def test_our_keys_are_c10s_names_for_their_values():
    for k in DispatchKey:
        if not k.name.startswith("StartOf"):
            assert ffi.string(lib.c10c_dispatch_key_name(k)).decode() == k.name
    assert len(DispatchKey) == 156 - 1  # every value but the EndOfFunctionalityKeys sentinel
    torch_names = {n for n in TK.__members__ if not n.startswith("EndOf")}
    assert torch_names <= {k.name for k in DispatchKey}
    assert set(TK.__members__) <= set(DispatchKey.__members__)  # the EndOf aliases too


def test_end_of_block_names_are_aliases_of_the_blocks_meta_keys_as_in_torch():
    ends = [n for n in TK.__members__ if n.startswith("EndOf")]
    assert len(ends) == 6
    for name in ends:
        ours, theirs = DispatchKey[name], getattr(TK, name)
        assert int(ours) == int(theirs)
        assert ours.name == theirs.name  # the block's Meta key ("Meta", "AutogradMeta", ...)
        assert str(ours) == str(theirs)
        assert ours is DispatchKey[ours.name]
    assert len({int(DispatchKey[n]) for n in ends}) == 6
    assert "EndOfFunctionalityKeys" not in TK.__members__
    assert "EndOfFunctionalityKeys" not in DispatchKey.__members__


def test_torchs_method_names_give_torchs_answers():
    rng = random.Random(5)
    for _ in range(200):
        names = random_names(rng, rng.randint(0, 5))
        t, o = torch_set(*names), ours_set(*names)
        assert o.raw_repr() == t.raw_repr() == o.raw
        assert str(o.highestPriorityTypeId()) == str(t.highestPriorityTypeId())
        back, tback = (
            DispatchKeySet.from_raw_repr(o.raw_repr()),
            C.DispatchKeySet.from_raw_repr(t.raw_repr()),
        )
        assert back == o and repr(back) == str(tback)
    assert DispatchKeySet().highestPriorityTypeId() is DispatchKey.Undefined
    assert str(C.DispatchKeySet.from_raw_repr(0).highestPriorityTypeId()) == "DispatchKey.Undefined"
    for bad in (-1, 1 << 64, "a", 1.5):
        with pytest.raises(TypeError):
            C.DispatchKeySet.from_raw_repr(bad)
        with pytest.raises(TypeError):
            DispatchKeySet.from_raw_repr(bad)
    assert repr(DispatchKey.CPU) == "<DispatchKey.CPU: 49>"


def test_parsing_accepts_exactly_what_c10_accepts():
    candidates = [k.name for k in DispatchKey] + [
        "Foo",
        "",
        "cpu",
        "AutogradHIP",
        "CatchAll",
        "EndOfFunctionalityKeys",
        "QuantizedUndefined",
    ]
    for name in candidates:
        try:
            expected = ("ok", int(C._dispatch_key_parse(name)))
        except RuntimeError as e:
            expected = ("error", str(e))
        try:
            got = ("ok", int(DispatchKeySet(name).highest_priority_key()))
            got = ("ok", DispatchKey[name].value) if got[0] == "ok" else got
        except RuntimeError as e:
            got = ("error", str(e))
        assert got[0] == expected[0], name
        if got[0] == "error":
            assert got[1] == expected[1]


def test_new_tensor_key_sets_equal_torchs():
    cases = [
        (torch.zeros(2, 3), "cpu", pyc10.strided, False, pyc10.float32),
        (torch.zeros(2, dtype=torch.int8), "cpu", pyc10.strided, False, pyc10.int8),
        (torch.zeros(2, 3, device="meta"), "meta", pyc10.strided, False, pyc10.float32),
        (torch.zeros(2, 3).to_sparse(), "cpu", pyc10.sparse_coo, False, pyc10.float32),
        (torch.zeros(2, 3).to_sparse_csr(), "cpu", pyc10.sparse_csr, False, pyc10.float32),
        (torch.zeros(2, 3).to_sparse_csc(), "cpu", pyc10.sparse_csc, False, pyc10.float32),
        (torch.zeros(2, 3).to_sparse_bsr((1, 1)), "cpu", pyc10.sparse_bsr, False, pyc10.float32),
        (
            torch.quantize_per_tensor(torch.zeros(2), 0.1, 0, torch.qint8),
            "cpu",
            pyc10.strided,
            False,
            pyc10.qint8,
        ),
        (torch.zeros(2, 3).to_mkldnn(), "cpu", pyc10._mkldnn, False, pyc10.float32),
    ]
    with torch.inference_mode():
        cases.append((torch.zeros(2), "cpu", pyc10.strided, True, pyc10.float32))
        cases.append((torch.zeros(2, device="meta"), "meta", pyc10.strided, True, pyc10.float32))
    for tensor, dev, layout, inference, dtype in cases:
        expected = C._dispatch_keys(tensor)
        got = DispatchKeySet.for_tensor(dev, layout, inference_mode=inference, dtype=dtype)
        assert got.raw == expected.raw_repr(), (tensor.layout, dev, inference)
        assert repr(got) == str(expected)


def test_backend_keys_of_every_device_type_match_torch():
    names = [
        "cpu",
        "cuda",
        "hip",
        "xla",
        "mps",
        "ipu",
        "xpu",
        "hpu",
        "ve",
        "lazy",
        "meta",
        "mtia",
        "privateuseone",
        "fpga",
        "maia",
        "vulkan",
    ]
    for name in names:
        expected = C._dispatch_key_for_device(name)
        key = ffi.new("c10c_dispatch_key *")
        dev = pyc10.device(name)
        assert lib.c10c_dispatch_key_compute(key, 6, 0, dev._type) == 0
        assert ffi.string(lib.c10c_dispatch_key_name(key[0])).decode() == expected


# Keys torch's Python enum exposes (it leaves out a few, FPGA among them).
RUNTIME_NAMES = [k.name for k in DispatchKey if 0 < k.value < 150 and hasattr(TK, k.name)]


def random_names(rng, n):
    return [rng.choice(RUNTIME_NAMES) for _ in range(n)]


def test_random_sets_agree_with_torch():
    rng = random.Random(7)
    for _ in range(400):
        names = random_names(rng, rng.randint(0, 5))
        t, o = torch_set(*names), ours_set(*names)
        assert o.raw == t.raw_repr()
        assert repr(o) == str(t)
        printed = str(t)[len("DispatchKeySet(") : -1]
        assert [k.name for k in o] == (printed.split(", ") if printed else [])
        assert len(o) == len(list(o))
        assert int(o.highest_priority_key()) == int(t.highestPriorityTypeId())
        name = rng.choice(RUNTIME_NAMES)
        probe, tprobe = DispatchKey[name], getattr(TK, name)
        assert o.has(probe) == t.has(tprobe)
        assert (probe in o) == t.has(tprobe)
        assert o.add(probe).raw == t.add(tprobe).raw_repr()
        assert o.remove(probe).raw == t.remove(tprobe).raw_repr()
        other_names = random_names(rng, rng.randint(0, 3))
        t2, o2 = torch_set(*other_names), ours_set(*other_names)
        assert (o | o2).raw == (t | t2).raw_repr()
        assert (o & o2).raw == (t & t2).raw_repr()
        assert (o - o2).raw == (t - t2).raw_repr()


def test_raw_words_and_priorities_match_torch_for_random_words():
    rng = random.Random(11)
    for _ in range(300):
        raw = rng.getrandbits(62)
        raw &= rng.getrandbits(62) | 0xFFFF  # sparser functionality bits
        t, o = C.DispatchKeySet.from_raw_repr(raw), DispatchKeySet.from_raw(raw)
        assert repr(o) == str(t)
        assert int(o.highest_priority_key()) == int(t.highestPriorityTypeId())


def test_full_and_full_after_match_torch():
    assert DispatchKeySet.full().raw == C._dispatch_keyset_full().raw_repr()
    assert len(DispatchKeySet.full()) == 136
    for k in DispatchKey:
        if 0 < k.value < 150 and hasattr(TK, k.name):
            expected = C._dispatch_keyset_full_after(getattr(TK, k.name)).raw_repr()
            assert DispatchKeySet.full_after(k).raw == expected, k.name


def test_backend_set_from_autograd_matches_torch():
    out = ffi.new("c10c_dispatch_key_set *")
    for k in DispatchKey:
        if k.value >= 150 or not hasattr(TK, k.name):
            continue
        expected = C._dispatch_get_backend_keyset_from_autograd(getattr(TK, k.name))
        assert lib.c10c_dispatch_key_set_backend_from_autograd(out, k) == 0
        assert out[0].repr == expected.raw_repr(), k.name


def test_torch_module_keysets_match():
    assert DispatchKeySet.full_after("AutogradOther").raw == C._after_autograd_keyset.raw_repr()
    assert DispatchKeySet.full_after("ADInplaceOrView").raw == (
        C._after_ADInplaceOrView_keyset.raw_repr()
    )


def test_alias_expansion():
    autograd = DispatchKeySet.from_alias("Autograd")
    assert autograd.raw == 0x380000FFFF
    assert DispatchKey.AutogradCUDA in autograd
    assert DispatchKeySet.from_alias(DispatchKey.CompositeImplicitAutograd).raw == 0x3803FFFFFF
    assert DispatchKeySet.from_alias("CPU") == DispatchKeySet("CPU")


def test_set_value_semantics():
    ks = DispatchKeySet.for_tensor("cpu")
    assert ks == DispatchKeySet.from_raw(0x9400010001)
    assert hash(ks) == hash(DispatchKeySet.from_raw(0x9400010001))
    assert len(ks) == 4 and bool(ks) and not DispatchKeySet()
    assert repr(DispatchKeySet()) == "DispatchKeySet()"
    assert pickle.loads(pickle.dumps(ks)) == ks
    assert ks.highest_priority_key() is DispatchKey.AutocastCPU
    assert ks.dispatch_table_index() == 114  # AutocastCPU's operator-table slot in c10


def test_bad_keys_raise():
    with pytest.raises(RuntimeError, match="could not parse dispatch key: Nope"):
        DispatchKeySet("Nope")
    with pytest.raises(ValueError, match="invalid dispatch key 500"):
        DispatchKeySet(500)
    with pytest.raises(TypeError):
        DispatchKeySet(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        DispatchKeySet.from_raw(-1)
    with pytest.raises(TypeError):
        DispatchKeySet.for_tensor("cpu", layout="strided")  # type: ignore[arg-type]
    with pytest.raises(
        NotImplementedError, match="Unsupported device type for sparse layout: FPGA"
    ):
        DispatchKeySet.for_tensor("fpga", pyc10.sparse_coo)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        DispatchKeySet.for_tensor("cuda:")
    assert DispatchKeySet("CPU").__or__(3) is NotImplemented


def test_bools_are_not_keys():
    for flag in (True, False):
        with pytest.raises(TypeError, match=r"expected a pyc10\.DispatchKey"):
            DispatchKeySet(flag)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            DispatchKeySet("CPU").has(flag)  # type: ignore[arg-type]


def test_keys_print_as_torch_prints_them():
    for name, tkey in TK.__members__.items():
        if name.startswith("EndOf"):
            continue
        key = DispatchKey[name]
        assert str(key) == str(tkey), name
        assert repr(key) == repr(tkey), name
        assert format(key) == format(tkey) == f"{tkey}" == f"{key}", name
        assert "%s" % key == "%s" % tkey, name  # noqa: UP031
        assert "{!r}".format(key) == "{!r}".format(tkey), name  # noqa: UP032


def test_key_sets_print_as_torch_prints_them():
    rng = random.Random(3)
    for _ in range(50):
        names = random_names(rng, rng.randint(0, 4))
        t, o = torch_set(*names), ours_set(*names)
        assert str(o) == str(t)
        assert repr(o) == repr(t)
        assert format(o) == format(t) == f"{t}" == f"{o}"


@pytest.mark.parametrize("spec", [">20", "d", "s", "10", "x"])
def test_format_specs_are_refused_as_torch_refuses_them(spec):
    for ours, theirs in [
        (DispatchKey.CPU, TK.CPU),
        (DispatchKey.AutogradCPU, TK.AutogradCPU),
        (ours_set("CPU", "AutogradCPU"), torch_set("CPU", "AutogradCPU")),
    ]:
        with pytest.raises(TypeError) as expected:
            format(theirs, spec)
        with pytest.raises(TypeError) as got:
            format(ours, spec)
        assert str(got.value) == str(expected.value).replace("torch._C.", "pyc10.")


def test_import_leaves_no_last_error(tmp_path):
    # A C, ctypes or cffi caller sharing libc10c reads its thread-local last error right after
    # its own failing call: `import pyc10` in between must not have left one set.
    code = (
        "import pyc10\n"
        "from pyc10._lib import ffi, lib\n"
        "print(lib.c10c_last_error_status() == lib.C10C_STATUS_OK)\n"
        "print(repr(ffi.string(lib.c10c_last_error_message())))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert proc.stdout.split("\n")[:2] == ["True", "b''"], proc.stdout + proc.stderr
