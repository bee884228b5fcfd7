"""Root bypasses every file permission, so `certify` re-executes itself without the capabilities that let it."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence

from ..vocabulary import BYPASS_CAPABILITIES

__all__ = ('CAPABILITIES_DROPPED', 'announce_dropped_capabilities', 'drop_bypass_capabilities')

CAPABILITIES_DROPPED = 'WORKSPACE_CONFORMANCE_CAPABILITIES_DROPPED'
"""Set in the re-executed process, so it does not re-execute again."""
_BY_SETPRIV = 'setpriv'
"""Its value when this module re-executed the process (a test sets it to anything else to never re-execute)."""


def announce_dropped_capabilities() -> None:
    """In the process `drop_bypass_capabilities` re-executed, say once, on stderr, what it dropped and why.

    Said by the process that runs the rules, once its preflight passed, so a run that stops before stays one line.
    """
    if os.environ.get(CAPABILITIES_DROPPED) != _BY_SETPRIV:
        return
    os.environ[CAPABILITIES_DROPPED] = '1'
    sys.stderr.write(
        'workspace-conformance: running as root; dropped CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH '
        'so permission rules can run (--keep-capabilities keeps them)\n'
    )
    sys.stderr.flush()


def drop_bypass_capabilities(argv: Sequence[str] | None) -> None:
    """As root, re-run this command without the capabilities that bypass file permissions (needs `setpriv`)."""
    setpriv = shutil.which('setpriv')
    if os.geteuid() != 0 or os.environ.get(CAPABILITIES_DROPPED) or setpriv is None:
        return
    arguments = list(sys.argv[1:] if argv is None else argv)
    environment = {**os.environ, CAPABILITIES_DROPPED: _BY_SETPRIV}
    command = [
        setpriv,
        '--bounding-set',
        BYPASS_CAPABILITIES,
        '--inh-caps',
        BYPASS_CAPABILITIES,
        sys.executable,
        '-m',
        'workspace_conformance',
        *arguments,
    ]
    os.execve(setpriv, command, environment)
