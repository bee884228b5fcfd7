"""What a 'windows' workspace has and lacks, as data the engine and the doubles share: a leaf module.

A 'windows' workspace (pydantic-ai 2.78's `WorkspacePlatform`) runs `shell=True` in PowerShell and has no POSIX
userland, so no rule may send it `sh`, `printf`, `ln` or `mkfifo`; its baseline is taken in PowerShell.
"""

from __future__ import annotations

import posixpath

__all__ = (
    'BASELINE_ENV_MARK',
    'BASELINE_POWERSHELL',
    'POSIX_PROGRAMS',
    'POWERSHELL_LOCATION',
    'POWERSHELL_REPORT',
    'POWERSHELL_SLEEP',
    'posix_program',
)

POSIX_PROGRAMS = frozenset({'sh', 'bash', 'dash', 'printf', 'ln', 'mkfifo', 'setsid', 'sleep', 'cat', 'env', 'kill'})
"""Programs of a POSIX userland that a 'windows' workspace has not: no rule sends one to it."""
BASELINE_ENV_MARK = '--- workspace-conformance baseline: env ---'
"""The line after which the baseline's output lists the environment, `NAME=value` a line."""
BASELINE_POWERSHELL = (
    f"[Console]::Out.Write('{BASELINE_ENV_MARK}' + [char]10); "
    'foreach ($item in Get-ChildItem Env:) { [Console]::Out.Write($item.Name + "=" + $item.Value + [char]10) }'
)
"""The baseline of a 'windows' workspace, in PowerShell (`shell=True`): its environment, listed as `env` lists it.
It looks for no tool: the rules that need `ln`, `mkfifo` or `setsid` have a POSIX form only."""

POWERSHELL_LOCATION = '[Console]::Out.Write((Get-Location).Path + [char]10)'
"""PowerShell (`shell=True` on 'windows') printing the directory the script started in, then a newline."""
POWERSHELL_REPORT = (
    "[Console]::Out.Write($env:WC_ADDED + '|' + (Get-Location).Path); [Console]::Error.Write('to-err'); exit 3"
)
"""PowerShell printing `$env:WC_ADDED|<start directory>` on stdout and `to-err` on stderr, then exiting 3."""
POWERSHELL_SLEEP = 'Start-Sleep -Seconds 3600'
"""PowerShell that runs for an hour: only a `timeout` ends it sooner."""


def posix_program(argv0: str) -> bool:
    """Whether `argv0` names a POSIX userland program (`sh`, `/bin/sh`, `printf`, ...) rather than a Windows one."""
    return posixpath.basename(argv0) in POSIX_PROGRAMS
