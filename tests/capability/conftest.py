"""Import the durable engines before any in-process pytester run, which removes the modules it saw imported.

`pytester.runpytest_inprocess` restores `sys.modules` afterwards; an engine (and the httpx/httpcore it uses) first
imported inside such a run would be imported again later as a second copy, whose exceptions the first copy's
handlers no longer recognize (Prefect's test server then fails to start with `httpcore.ConnectError`).
"""

from __future__ import annotations

import contextlib

for _engine in (
    'dbos',
    'prefect.testing.utilities',
    'pydantic_ai.durable_exec.dbos',
    'pydantic_ai.durable_exec.prefect',
    'pydantic_ai.durable_exec.temporal',
):
    with contextlib.suppress(ImportError):
        __import__(_engine)
