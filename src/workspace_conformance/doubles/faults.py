"""`FaultyBackend`: any backend with latency, transient errors, hangs, death and output limits injected."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic_ai.workspaces import WorkspaceOutputLimitError, WorkspaceUnavailableError

from .._mirror import Mirror, mirrored_class, protocol_members

__all__ = ('FaultyBackend', 'Injection')


@dataclass(frozen=True)
class Injection:
    """One fault the wrapper injected: which operation, its call number, and what was done."""

    operation: str
    call: int
    fault: str


class FaultyBackend(Mirror):
    """Wrap `backend`; every protocol operation it has passes through, with the faults configured here.

    Deterministic: transient errors fall on the calls `transient_on` names, or, with `transient_rate`, on the
    calls a `random.Random(seed)` picks. `injected` records every fault, in order.

    Args:
        backend: Any workspace backend; the wrapper has exactly its protocols.
        latency: Seconds added before each operation, per operation name (`'*'` for all).
        transient_on: Operation name -> call numbers (1-based) that raise `transient_error` instead.
        transient_rate: Probability of a transient error on any call, drawn from `seed`.
        transient_error: The exception factory for transient errors (a provider SDK's `ConnectionError`, say).
        hang_on: Operation name -> call number that never returns (until cancelled).
        unavailable_after: After this many operations in all, every call raises `WorkspaceUnavailableError`.
        output_limit: Commands whose stdout+stderr exceed this many characters raise `WorkspaceOutputLimitError`.
    """

    def __new__(cls, backend: object, **options: Any) -> FaultyBackend:
        return object.__new__(mirrored_class(cls, protocol_members(backend)))

    def __init__(
        self,
        backend: object,
        *,
        latency: Mapping[str, float] | None = None,
        transient_on: Mapping[str, set[int] | frozenset[int] | list[int]] | None = None,
        transient_rate: float = 0.0,
        transient_error: Callable[[str], BaseException] = ConnectionError,
        hang_on: Mapping[str, int] | None = None,
        unavailable_after: int | None = None,
        output_limit: int | None = None,
        seed: int = 0,
    ) -> None:
        self._wrapped = backend
        self.latency = dict(latency or {})
        self.transient_on = {name: set(calls) for name, calls in (transient_on or {}).items()}
        self.transient_rate = transient_rate
        self.transient_error = transient_error
        self.hang_on = dict(hang_on or {})
        self.unavailable_after = unavailable_after
        self.output_limit = output_limit
        self.random = random.Random(seed)
        self.calls: Counter[str] = Counter()
        self.injected: list[Injection] = []

    @property
    def wrapped(self) -> object:
        """The backend behind the faults."""
        return self._wrapped

    def _inject(self, operation: str, fault: str) -> None:
        self.injected.append(Injection(operation=operation, call=self.calls[operation], fault=fault))

    async def _intercept(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[[], Awaitable[Any]]
    ) -> Any:
        self.calls[name] += 1
        number = self.calls[name]
        if self.unavailable_after is not None and sum(self.calls.values()) > self.unavailable_after:
            self._inject(name, 'unavailable')
            raise WorkspaceUnavailableError(f'injected: the environment died after {self.unavailable_after} operations')
        delay = self.latency.get(name, self.latency.get('*', 0.0))
        if delay:
            self._inject(name, f'latency {delay:g}s')
            await anyio.sleep(delay)
        if self.hang_on.get(name) == number:
            self._inject(name, 'hang')
            await anyio.sleep_forever()
        if number in self.transient_on.get(name, set()) or (
            self.transient_rate and self.random.random() < self.transient_rate
        ):
            self._inject(name, 'transient error')
            raise self.transient_error(f'injected transient failure of {name} call {number}')
        result = await call()
        if name == 'run' and self.output_limit is not None:
            size = len(result.stdout) + len(result.stderr)
            if size > self.output_limit:
                self._inject(name, 'output limit')
                raise WorkspaceOutputLimitError(
                    f'injected: output of {size} characters exceeds {self.output_limit}',
                    limit=self.output_limit,
                    stdout=result.stdout[: self.output_limit],
                    stderr=result.stderr[: max(0, self.output_limit - len(result.stdout))],
                )
        return result
