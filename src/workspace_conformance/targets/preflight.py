"""Before any rule: build the target's backend once per event loop and make its first call, with a bound.

The verdict decides the run: every loop failed (stop with one line), a loop whose failure shows the backend is tied
to another loop that worked (left out, when the user let the loops be chosen), or go on with every loop.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai.workspaces import WorkspaceBackend

from ..loop_ties import loop_tie, where_raised
from ._ledger import record_ref
from .base import Target
from .loading import IMPORT_HINT

__all__ = ('FIRST_CALL_BOUND', 'Preflight', 'Trial', 'preflight')

FIRST_CALL_BOUND = 30.0
"""Seconds (at time scale 1) building the backend and its first call, `working_dir()`, may take together."""


@dataclass(frozen=True)
class Trial:
    """What building the backend and its first call did on one event loop."""

    loop: str
    problem: str | None = None
    """None when it worked; else what went wrong, e.g. `raised RuntimeError when called: no credentials`."""
    hint: str | None = None
    error: str | None = None
    """`Type: message` of the exception behind the problem, if one."""
    tied_to: str | None = None
    """The other event loop the error shows the backend's code is tied to, if it shows one."""
    where: str | None = None
    """`file.py:LINE` in the backend's code where the error was raised, if known."""
    awaited: bool = False
    """The factory returned an awaitable, which was awaited."""
    cleanup: str | None = None
    """What went wrong destroying the environment it created (`--destroy`), if anything."""


@dataclass(frozen=True)
class Preflight:
    """The preflight's verdict: the loops to run, those left out and why, or the one line that stops the run."""

    loops: tuple[str, ...]
    left_out: dict[str, str] = field(default_factory=dict)
    """Loop -> why it was left out: its failure showed the backend is tied to another loop, where it worked."""
    failure: str | None = None
    awaits: bool = False
    trials: tuple[Trial, ...] = ()

    def lines(self) -> list[str]:
        """One line per loop left out (which, why, how to force it), and per loop forced on a backend tied away."""
        lines = [
            f'{loop} left out: {why}; pass --anyio-backend {loop} to force it' for loop, why in self.left_out.items()
        ]
        for trial in self.trials:
            if trial.problem is not None and trial.tied_to is not None and trial.loop in self.loops:
                lines.append(
                    f'{trial.loop} kept as --anyio-backend asks, though the backend is tied to {trial.tied_to} '
                    f'({_cause(trial)}): its rules will fail'
                )
        return lines


def preflight(
    target: Target, loops: Sequence[str], root: Path, *, scale: float = 1.0, choose: bool = True
) -> Preflight:
    """Try the target's backend on each of `loops` under `root` (refs in its ledger); `choose` may leave loops out.

    A loop is left out only when its failure shows the backend is tied to another loop on which it worked.
    """
    trials = tuple(_trial(target, loop, root, scale) for loop in loops)
    awaits = any(trial.awaited for trial in trials)
    worked = [trial.loop for trial in trials if trial.problem is None]
    forced = [trial.loop for trial in trials if not choose and trial.tied_to is not None]
    if not worked and not forced:
        return Preflight(loops=(), failure=_stop_line(target.name, trials), awaits=awaits, trials=trials)
    left_out: dict[str, str] = {}
    if choose:
        for trial in trials:
            if trial.problem is not None and trial.tied_to in worked:
                left_out[trial.loop] = f'the backend is tied to {trial.tied_to} ({_cause(trial)})'
    kept = tuple(loop for loop in loops if loop not in left_out)
    return Preflight(loops=kept, left_out=left_out, awaits=awaits, trials=trials)


def _cause(trial: Trial) -> str:
    """The error of a trial and where the backend raised it: `RuntimeError: no running event loop, sdk.py:24`."""
    return f'{trial.error}, {trial.where}' if trial.where else str(trial.error)


def _stop_line(name: str, trials: Sequence[Trial]) -> str:
    """One line for a backend that failed on every loop: the factory, the loops, the error(s), a hint."""
    problems = {trial.problem for trial in trials}
    hint = next((trial.hint for trial in trials if trial.hint), None)
    if len(problems) == 1:
        loops = ' and '.join(trial.loop for trial in trials)
        line = f'target {name!r} {trials[0].problem} (on {loops})'
    else:
        line = f'target {name!r}: ' + '; '.join(f'on {trial.loop}, {trial.problem}' for trial in trials)
    return f'{line}; hint: {hint}' if hint else line


def _trial(target: Target, loop: str, root: Path, scale: float) -> Trial:
    """Build the backend and make its first call on `loop`, in `root / 'preflight' / loop`; never raises."""
    bound = FIRST_CALL_BOUND * scale
    found: dict[str, Any] = {}

    async def first_contact() -> Trial:
        with anyio.move_on_after(bound) as scope:
            trial = await _contact(target, loop, root, found)
        if scope.cancelled_caught:
            what = 'working_dir() did not answer' if 'backend' in found else 'the factory did not return'
            awaited = bool(found.get('awaited', False))
            trial = Trial(
                loop, f'{what} within {bound:g} s', 'a slow provider? raise --conformance-time-scale', awaited=awaited
            )
        backend = found.get('backend')
        if backend is None:
            return trial
        cleanup = ref = None
        try:
            ref = backend.ref
            record_ref(root, ref)
        except Exception as error:
            cleanup = f'reading its ref raised {type(error).__name__}: {_message(error)}'
        if target.destroy_environment is not None and ref is not None:  # no ref: it created no environment
            try:
                with anyio.fail_after(bound):
                    await target.destroy_environment(backend)
            except Exception as error:
                cleanup = f'--destroy raised {type(error).__name__}: {_message(error)}'
        return dataclasses.replace(trial, cleanup=cleanup)

    try:
        return anyio.run(first_contact, backend=loop)
    except Exception as error:  # the event loop itself failed (e.g. the backend broke its shutdown)
        return _failed(loop, 'made its event loop fail', error)


async def _contact(target: Target, loop: str, root: Path, found: dict[str, Any]) -> Trial:
    directory = root / 'preflight' / loop
    try:
        built: Any = target.backend(directory)
        if inspect.isawaitable(built):
            found['awaited'] = True
            built = await built
    except BaseException as error:
        _reraise_control(error)
        return _failed(loop, 'raised {kind} when called', error, awaited=found.get('awaited', False))
    awaited = bool(found.get('awaited', False))
    if isinstance(built, type):
        problem = f'returned the class {built.__name__}, not a backend instance'
        return Trial(loop, problem, 'returns a class; return an instance', awaited=awaited)
    if not isinstance(built, WorkspaceBackend):
        return Trial(loop, f'returned a {type(built).__name__}, not a WorkspaceBackend', awaited=awaited)
    found['backend'] = built
    try:
        await built.working_dir()
    except BaseException as error:
        _reraise_control(error)
        return _failed(loop, 'built a backend whose first call, working_dir(), raised {kind}', error, awaited=awaited)
    return Trial(loop, awaited=awaited)


def _reraise_control(error: BaseException) -> None:
    """Raise `error` again if it is cancellation, an interrupt or an exit; an SDK's own BaseException is a failure."""
    if isinstance(error, KeyboardInterrupt | SystemExit | GeneratorExit | anyio.get_cancelled_exc_class()):
        raise error


def _failed(loop: str, what: str, error: BaseException, *, awaited: bool = False) -> Trial:
    """The trial of a loop on which `error` was raised; `what` names where, with `{kind}` for its type."""
    message = _message(error)
    kind = type(error).__name__
    problem = what.format(kind=kind) + (f': {message}' if message else '')
    return Trial(
        loop,
        problem,
        _hint(error),
        error=f'{kind}: {message}' if message else kind,
        tied_to=loop_tie(error, loop),
        where=where_raised(error),
        awaited=awaited,
    )


def _hint(error: BaseException) -> str | None:
    if isinstance(error, FileNotFoundError):
        return 'the scratch directory exists; create any missing parents below it (mkdir(parents=True))'
    if isinstance(error, ImportError):
        return IMPORT_HINT
    return None


def _message(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        return '<str() of this exception raised>'
    return ' '.join(text.split())[:500]
