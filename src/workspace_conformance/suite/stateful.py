"""The model-based rule: random sequences of file operations, on the backend and on `InMemoryBackend` in lockstep."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from hypothesis.stateful import rule as step
from pydantic_ai.workspaces import FileEntry, Workspace, WorkspaceBackend

from ..authoring import (
    call_in_loop,
    current_run,
    gather,
    paths,
    profile_settings,
    rule,
    run_in_worker,
    safe_str,
    scratch,
    workspace_of,
)
from ..doubles.memory import InMemoryBackend

__all__ = ('SHRINK_CALLS', 'SHRINK_SECONDS', 'ShrinkBudget', 'StatefulRules')

PATHS = st.lists(st.sampled_from(['a', 'b', 'c']), min_size=1, max_size=3).map('/'.join)
"""Few names, so operations collide: a file where a directory is expected, a write below a file, and so on."""
DATA = st.sampled_from([b'', b'x', b'short', b'a longer payload\r\n\x00\xff'])
NAMES = ('write_bytes', 'read_bytes', 'make_dir', 'remove', 'list_dir', 'stat', 'exists')
"""The file operations a program is made of; each takes a path, `write_bytes` also the data."""
OPERATIONS = st.lists(st.tuples(st.sampled_from(NAMES), PATHS, DATA), min_size=1, max_size=3)
"""One step: up to three operations (those on overlapping paths are dropped, so the rest commute)."""

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


async def _attempt_all(calls: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """Each `(operation, *args)` at once: what each returned, or the error it raised, in order."""
    return await gather(*(_attempt(operation, *args) for operation, *args in calls))


EXTRA_FOLDERS = 4
"""Folders made ahead beyond one per example, for the programs Hypothesis runs besides its examples."""
SHRINK_CALLS = 3000
"""Backend calls shrinking one failure may cost before the shortest program found so far is reported."""
SHRINK_SECONDS = 60.0
"""Seconds (at time scale 1) shrinking one failure may take before the shortest program so far is reported."""


@dataclass
class ShrinkBudget:
    """What shrinking a failure may still cost: once spent, new programs no longer reach the backend."""

    calls: int
    seconds: float
    spent: int = 0
    failed_at: float | None = None
    first: str | None = None
    """The first failure seen, kept for when a replay of its program answers differently (Hypothesis's `Flaky`)."""

    def charge(self) -> None:
        """Count one backend call (only calls made after the first failure count)."""
        self.spent += 1

    def failed(self) -> None:
        """Note that a program failed: shrinking, and the budget's clock, start now (once)."""
        if self.failed_at is None:
            self.failed_at, self.spent = time.monotonic(), 0

    def exhausted(self) -> bool:
        """Whether a failure was found and shrinking it has spent its calls or its time."""
        if self.failed_at is None:
            return False
        return self.spent >= self.calls or time.monotonic() - self.failed_at >= self.seconds

    def note(self) -> str:
        """The line a failure reported after the budget ran out carries."""
        elapsed = time.monotonic() - (self.failed_at or 0)
        return f'(shrinking stopped after {self.spent:,} backend calls and {elapsed:.0f} s; a shorter program may fail)'


class FileOperations(RuleBasedStateMachine):
    """Each step runs one operation on the backend under test and on the reference model, and compares them."""

    subject: ClassVar[Workspace]
    subject_root: ClassVar[str]
    budget: ClassVar[ShrinkBudget]
    folders: ClassVar[list[str]]
    """Empty folders made ahead, all at once, one for each program; a program makes its own once they run out."""

    def __init__(self) -> None:
        super().__init__()
        # Once shrinking spent its budget, new programs are drawn as before but run nowhere (and so pass), which
        # ends the shrink; the final replay of the shortest failing program still runs for real.
        self.live = not self.budget.exhausted() or current_build_context().is_final
        if not self.live:
            return
        self.budget.charge()
        self.model = Workspace(InMemoryBackend(uid=0, working_dir='/model'))
        if self.folders:
            self.folder = self.folders.pop()
            return
        self.folder = uuid.uuid4().hex[:8]
        # An error here would end this program but not a replay of it: the first step finds the folder missing.
        call_in_loop(_attempt, self.subject.make_dir, paths.join(self.subject_root, self.folder))
        # A program's folder stays until the rule's scratch directory goes: removing it would cost a round trip.

    @step(operations=OPERATIONS)
    def run_at_once(self, operations: list[tuple[str, str, bytes]]) -> None:
        """Operations on paths none of which holds another run at once on the backend, then in order on the model.

        Such operations commute on a correct backend, so any interleaving must give the model's sequential results;
        a program of them costs one round trip a step instead of one an operation.
        """
        if not self.live:
            return
        chosen = _independent(operations)
        try:
            self._compare_all(chosen)
        except BaseException as error:
            self.budget.failed()
            if self.budget.first is None:
                self.budget.first = safe_str(error, named=not isinstance(error, AssertionError))
            raise

    def _compare_all(self, operations: list[tuple[str, str, bytes]]) -> None:
        for _ in operations:
            self.budget.charge()
        here = paths.join(self.subject_root, self.folder)
        calls = [
            (getattr(self.subject, name), paths.join(here, path), *_arguments(name, data))
            for name, path, data in operations
        ]
        mine = call_in_loop(_attempt_all, calls)
        for (name, path, data), got in zip(operations, mine, strict=True):
            model = call_in_loop(
                _attempt, getattr(self.model, name), paths.join('/model', path), *_arguments(name, data)
            )
            _check(name, path, got, model)


def _arguments(name: str, data: bytes) -> tuple[bytes, ...]:
    return (data,) if name == 'write_bytes' else ()


def _independent(operations: list[tuple[str, str, bytes]]) -> list[tuple[str, str, bytes]]:
    """The operations, in order, whose path neither is nor lies above or below the path of one kept before it."""
    kept: list[tuple[str, str, bytes]] = []
    for operation in operations:
        parts = operation[1].split('/')
        if all(not _nested(parts, other[1].split('/')) for other in kept):
            kept.append(operation)
    return kept


def _nested(one: list[str], other: list[str]) -> bool:
    shorter = min(len(one), len(other))
    return one[:shorter] == other[:shorter]


def _check(name: str, path: str, mine: Any, model: Any) -> None:
    """Fail unless the backend's result (or kind of error) for `name(path)` is the model's."""
    if name == 'stat' and isinstance(mine, FileEntry) and isinstance(model, FileEntry):
        assert mine.size in (None, model.size), f'stat({path!r}) gave size {mine.size}, the model {model.size}'
    if _outcome(mine) != _outcome(model):
        shown = safe_str(mine) if isinstance(mine, BaseException) else repr(_outcome(mine))
        expected = safe_str(model) if isinstance(model, BaseException) else repr(_outcome(model))
        # From the backend's own error: where that error echoes one a more basic rule found, the report says so.
        cause = mine if isinstance(mine, BaseException) else None
        raise AssertionError(f'{name}({path!r}) gave {shown}; the reference model gave {expected}') from cause


class StatefulRules:
    """The model-based check: the backend behaves like the reference model on every sequence tried."""

    @rule(area='stateful', requires=['filesystem'], since='0.2.0', timeout=300, must='F09')
    async def test_file_operations_match_the_reference_model(
        self, backend: WorkspaceBackend, conformance_profile: str
    ) -> None:
        """Any sequence of file operations gives the results and errors the reference model `InMemoryBackend` gives.

        Writes, reads, directory makes, removes, listings, stats and existence checks run in lockstep on the
        backend and on the model; a failure prints the shortest program found within the shrink budget.
        """
        workspace = workspace_of(backend)
        budget = ShrinkBudget(calls=SHRINK_CALLS, seconds=current_run().seconds(SHRINK_SECONDS))
        # One bug, shrunk within the budget, is what a backend author needs; hunting for more costs calls.
        chosen = settings(profile_settings(conformance_profile), report_multiple_bugs=False)
        async with scratch(workspace) as root:
            folders = [uuid.uuid4().hex[:8] for _ in range(chosen.max_examples + EXTRA_FOLDERS)]
            await gather(*(workspace.make_dir(paths.join(root, folder)) for folder in folders))
            attributes = {'subject': workspace, 'subject_root': root, 'budget': budget, 'folders': folders}
            machine = type('FileOperations', (FileOperations,), attributes)
            try:
                await run_in_worker(lambda: run_state_machine_as_test(machine, settings=chosen))
            except Flaky as error:
                # The backend's state changed under the program (it answered its replay differently): say what failed.
                raise AssertionError(
                    f'{budget.first or safe_str(error)} (and the same program, run again, gave other results: the '
                    "backend's state changed between the runs)"
                ) from error
            except Exception as error:
                if budget.exhausted():
                    error.add_note(budget.note())
                raise
