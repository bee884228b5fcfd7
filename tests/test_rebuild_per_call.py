"""Durable rebuild mode of the backend suite: every operation goes to a backend rebuilt from the ref.

`LocalWorkspaceBackend` keeps nothing in the Python object, so it passes in that mode; the mutant gate proves that
a backend that does (`files_in_the_python_object`) fails it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, SupportsCommands, SupportsFilesystem, WorkspaceRef

from workspace_conformance.engine._support import RebuiltPerCall, rebuilt_per_call
from workspace_conformance.targets import local_target, suite_for
from workspace_conformance.targets.certification import installed_loops

# On asyncio: the mode wraps calls the same way on every loop, and test_self_certification runs local on both.
TestLocalRebuiltPerCall = suite_for(
    local_target(), name='TestLocalRebuiltPerCall', rebuild_per_call=True, anyio_backends=['asyncio']
)


@pytest.mark.anyio
async def test_each_operation_goes_to_a_backend_built_from_the_ref(tmp_path: Path) -> None:
    original = LocalWorkspaceBackend(tmp_path)
    built: list[WorkspaceRef] = []

    def attach(ref: WorkspaceRef) -> LocalWorkspaceBackend:
        built.append(ref)
        return LocalWorkspaceBackend(ref.id)

    backend = rebuilt_per_call(original, attach)
    assert isinstance(backend, RebuiltPerCall)
    assert isinstance(backend, SupportsFilesystem) and isinstance(backend, SupportsCommands)
    path = str(tmp_path / 'a')
    await backend.write_bytes(path, b'1')
    assert await backend.read_bytes(path) == b'1'
    assert built == [original.ref, original.ref]
    assert backend.ref == original.ref


@pytest.mark.anyio
async def test_a_rebuild_with_another_ref_fails_the_call(tmp_path: Path) -> None:
    (tmp_path / 'other').mkdir()
    backend = rebuilt_per_call(LocalWorkspaceBackend(tmp_path), lambda ref: LocalWorkspaceBackend(tmp_path / 'other'))
    with pytest.raises(AssertionError, match='built a backend with ref'):
        await backend.exists(str(tmp_path / 'a'))


def test_without_attach_backend_rebuild_mode_skips_as_fixture_missing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_no_attach="""
import dataclasses
from workspace_conformance.targets import local_target, suite_for
from workspace_conformance.targets.certification import installed_loops

TestNoAttach = suite_for(dataclasses.replace(local_target(), attach_backend=None), only=['exists'])
"""
    )
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '--conformance-rebuild-per-call', '-rs')
    result.assert_outcomes(skipped=len(installed_loops(('asyncio', 'trio'))))
    result.stdout.fnmatch_lines(['*[[]files/exists[]] fixture-missing: provide the `attach_backend` fixture*'])
