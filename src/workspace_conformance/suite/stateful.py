"""The model-based rule: random sequences of file operations, on the backend and on `InMemoryBackend` in lockstep."""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from hypothesis.stateful import rule as step
from pydantic_ai.workspaces import FileEntry, Workspace, WorkspaceBackend

from ..doubles.memory import InMemoryBackend
from ._guard import safe_str
from ._hypothesis import call_in_loop, profile_settings, run_in_worker
from ._rules import rule
from ._support import scratch, workspace_of

__all__ = ('StatefulRules',)

PATHS = st.lists(st.sampled_from(['a', 'b', 'c']), min_size=1, max_size=3).map('/'.join)
"""Few names, so operations collide: a file where a directory is expected, a write below a file, and so on."""
DATA = st.sampled_from([b'', b'x', b'short', b'a longer payload\r\n\x00\xff'])

_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    # A path below a regular file is missing in a shell's eyes (`test -e`), not-a-directory in the kernel's.
    (FileNotFoundError, 'missing'),
    (NotADirectoryError, 'missing'),
    (IsADirectoryError, 'is-a-directory'),
    (FileExistsError, 'exists'),
    (PermissionError, 'permission'),
    (ValueError, 'refused'),
    (OSError, 'os-error'),
)


def _outcome(value: Any) -> Any:
    """What an operation returned, or which kind of error it raised, in a form both sides can be compared in."""
    if isinstance(value, BaseException):
        kind = next((name for error, name in _ERRORS if isinstance(value, error)), type(value).__name__)
        return ('error', kind)
    if isinstance(value, FileEntry):
        return ('entry', value.is_dir)
    if isinstance(value, list | tuple):
        return sorted((entry.name, entry.is_dir) for entry in value)
    return value


async def _attempt(operation: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    try:
        return await operation(*args)
    except Exception as error:
        return error


class FileOperations(RuleBasedStateMachine):
    """Each step runs one operation on the backend under test and on the reference model, and compares them."""

    subject: ClassVar[Workspace]
    subject_root: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.model = Workspace(InMemoryBackend(uid=0, working_dir='/model'))
        self.folder = uuid.uuid4().hex[:8]
        call_in_loop(self.subject.make_dir, posixpath.join(self.subject_root, self.folder))

    def teardown(self) -> None:
        call_in_loop(_attempt, self.subject.remove, posixpath.join(self.subject_root, self.folder))

    def _compare(self, name: str, path: str, *args: Any) -> None:
        mine = call_in_loop(
            _attempt, getattr(self.subject, name), posixpath.join(self.subject_root, self.folder, path), *args
        )
        model = call_in_loop(_attempt, getattr(self.model, name), posixpath.join('/model', path), *args)
        if name == 'stat' and isinstance(mine, FileEntry) and isinstance(model, FileEntry):
            assert mine.size in (None, model.size), f'stat({path!r}) gave size {mine.size}, the model {model.size}'
        if _outcome(mine) != _outcome(model):
            shown = safe_str(mine) if isinstance(mine, BaseException) else repr(_outcome(mine))
            expected = safe_str(model) if isinstance(model, BaseException) else repr(_outcome(model))
            raise AssertionError(f'{name}({path!r}) gave {shown}; the reference model gave {expected}')

    @step(path=PATHS, data=DATA)
    def write_bytes(self, path: str, data: bytes) -> None:
        self._compare('write_bytes', path, data)

    @step(path=PATHS)
    def read_bytes(self, path: str) -> None:
        self._compare('read_bytes', path)

    @step(path=PATHS)
    def make_dir(self, path: str) -> None:
        self._compare('make_dir', path)

    @step(path=PATHS)
    def remove(self, path: str) -> None:
        self._compare('remove', path)

    @step(path=PATHS)
    def list_dir(self, path: str) -> None:
        self._compare('list_dir', path)

    @step(path=PATHS)
    def stat(self, path: str) -> None:
        self._compare('stat', path)

    @step(path=PATHS)
    def exists(self, path: str) -> None:
        self._compare('exists', path)


class StatefulRules:
    """The model-based check: the backend behaves like the reference model on every sequence tried."""

    @rule(area='stateful', requires=['filesystem'], since='0.2.0', timeout=300)
    async def test_file_operations_match_the_reference_model(
        self, backend: WorkspaceBackend, conformance_profile: str
    ) -> None:
        """Any sequence of file operations gives the results and errors the reference model `InMemoryBackend` gives.

        Writes, reads, directory makes, removes, listings, stats and existence checks run in lockstep on the
        backend and on the model; a failure prints the shortest program Hypothesis found.
        """
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            machine = type('FileOperations', (FileOperations,), {'subject': workspace, 'subject_root': root})
            settings = profile_settings(conformance_profile)
            await run_in_worker(lambda: run_state_machine_as_test(machine, settings=settings))
