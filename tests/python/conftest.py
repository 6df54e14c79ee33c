"""Shared fixtures: torch (exactly 2.13.0) is the oracle every behaviour test compares with."""

from __future__ import annotations

import pytest
import torch

if not torch.__version__.startswith("2.13.0"):
    pytest.exit(f"the tests compare with torch 2.13.0, found {torch.__version__}", returncode=2)
