"""`workspace-conformance certify --tools` as a vendor runs it: one-line errors, a verdict on their capability."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from ..runner import certify

VENDOR_MODULE = Path(__file__).resolve().parent / 'notes_vendor.py'


@pytest.fixture
def vendor(tmp_path: Path) -> Path:
    """A vendor's project directory holding their notes capability, and nothing of ours."""
    shutil.copy(VENDOR_MODULE, tmp_path / 'notes_vendor.py')
    return tmp_path


def test_bad_tools_exit_2_with_one_line(vendor: Path) -> None:
    result = certify(vendor, '--tools', 'nonsense')
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result
    assert "--tools 'nonsense' is neither a named tool target (harness-filesystem" in lines[0]
    assert 'Traceback' not in result.stderr + result.stdout


@pytest.mark.skipif(importlib.util.find_spec('pydantic_ai_harness') is not None, reason='the harness is installed')
def test_a_harness_tool_target_without_the_harness_is_not_run(vendor: Path) -> None:
    result = certify(vendor, '--tools', 'harness-filesystem')
    assert result.returncode == 3, result
    assert 'harness-filesystem: not run: pydantic-ai-harness is not installed' in result.stdout + result.stderr


def test_a_vendor_capability_is_certified_by_module_and_factory(vendor: Path) -> None:
    result = certify(vendor, '--tools', 'notes_vendor:Notes', '-k', 'no_host_writes or same_results_everywhere')
    assert result.returncode == 1, result  # narrowed with -k: never certified, but both rules pass
    assert '2 passed' in result.stdout and 'workspace-conformance: not certified (notes_vendor:Notes)' in result.stdout
