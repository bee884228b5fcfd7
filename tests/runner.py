"""Facts about the runner that tests depend on, and the options of a quick `certify` run."""

from __future__ import annotations

import os
import tempfile

QUICK_CERTIFY = ('--anyio-backend', 'asyncio', '--conformance-profile', 'ci')
"""`certify` options for a quick run: one event loop, the `ci` profile."""


def bypasses_permissions() -> bool:
    """Whether this process reads a mode-000 file (root with CAP_DAC_OVERRIDE)."""
    with tempfile.NamedTemporaryFile() as probe:
        os.chmod(probe.name, 0)
        try:
            with open(probe.name, 'rb'):
                return True
        except PermissionError:
            return False
