"""What the torch oracle of this run can answer, for the tests that depend on its build.

PyPI's torch for aarch64 is the CUDA build (tests/cross/python_aarch64.sh runs it with stand-in
CUDA libraries and no GPU). Where torch's CPU build and its CUDA build answer differently without
a GPU (torch.device(0) is cuda:0, not an error; pin_memory=True says "No CUDA GPUs are
available"), pyc10 gives the CPU build's answer when no driver is found, so those comparisons
only hold against a CPU build.
"""

from __future__ import annotations

import pytest
import torch

TORCH_CUDA_BUILD_WITHOUT_GPU = torch.version.cuda is not None and not torch.cuda.is_available()

needs_torch_cpu_build = pytest.mark.skipif(
    TORCH_CUDA_BUILD_WITHOUT_GPU,
    reason="the oracle is torch's CUDA build without a GPU, whose answer here differs from its "
    "CPU build's, which pyc10 gives when no CUDA driver is found",
)
