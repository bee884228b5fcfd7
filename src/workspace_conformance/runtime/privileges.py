"""Root bypasses every file permission, so `certify` re-executes itself without the capabilities that let it."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence

from ..vocabulary import BYPASS_CAPABILITIES

__all__ = ('CAPABILITIES_DROPPED', 'drop_bypass_capabilities')

CAPABILITIES_DROPPED = 'WORKSPACE_CONFORMANCE_CAPABILITIES_DROPPED'
"""Set in the re-executed process, so it does not re-execute again."""


def drop_bypass_capabilities(argv: Sequence[str] | None) -> None:
    """As root, re-run this command without the capabilities that bypass file permissions (needs `setpriv`)."""
    setpriv = shutil.which('setpriv')
    if os.geteuid() != 0 or os.environ.get(CAPABILITIES_DROPPED) or setpriv is None:
        return
    arguments = list(sys.argv[1:] if argv is None else argv)
    sys.stderr.write(
        'workspace-conformance: running as root; dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH '
        'so permission rules can run (--keep-capabilities keeps them)\n'
    )
    sys.stderr.flush()
    environment = {**os.environ, CAPABILITIES_DROPPED: '1'}
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
