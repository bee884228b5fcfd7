"""Import the durable engines before any in-process pytester run, which removes the modules it saw imported.

`pytester.runpytest_inprocess` restores `sys.modules` afterwards; an engine (and the httpx/httpcore it uses) first
imported inside such a run would be imported again later as a second copy, whose exceptions the first copy's
handlers no longer recognize (Prefect's test server then fails to start with `httpcore.ConnectError`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from workspace_conformance.authoring import rule_of

for _engine in (
    'dbos',
    'prefect.testing.utilities',
    'pydantic_ai.durable_exec.dbos',
    'pydantic_ai.durable_exec.prefect',
    'pydantic_ai.durable_exec.temporal',
):
    with contextlib.suppress(ImportError):
        __import__(_engine)


ENGINES = frozenset({'dbos', 'prefect', 'temporal'})
"""Requirements of the durable rebuild rules: each starts its engine's local harness (Prefect's server alone takes
about ten seconds)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the engines' rules of a suite class that says `engines_proven_by`: its parent class runs them.

    A read-only or second-storage variant of a capability reaches the engines through the same code as the class it
    varies, which already runs each engine's rule; starting every engine again for it proves nothing new.
    """
    kept, dropped = [], []
    for item in items:
        cls: Any = getattr(item, 'cls', None)
        rule = rule_of(getattr(item, 'function', None))
        by = getattr(cls, 'engines_proven_by', None)
        if cls is not None and by is not None and rule is not None and ENGINES & set(rule.requires):
            if by not in {base.__name__ for base in cls.__mro__[1:]}:
                raise pytest.UsageError(f'{cls.__name__}.engines_proven_by = {by!r} names none of its base classes')
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
