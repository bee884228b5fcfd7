"""A vendor's backend with one basic promise broken: a disk-quota check that refuses every write.

Written the way an integrator writes a thin layer over a local sandbox: `LocalWorkspaceBackend` for everything, and a
quota check in front of `write_bytes` whose arithmetic is wrong, so every write fails. Every other operation works.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic_ai.workspaces import LocalWorkspaceBackend


class QuotaDisk(LocalWorkspaceBackend):
    """A local sandbox that refuses a write past its quota (and, by a slip, refuses every write)."""

    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        # The slip: an unset QUOTA_DISK_MIB was meant as "no quota", and reads as a quota of 0 bytes.
        self.quota = int(os.environ.get('QUOTA_DISK_MIB', '0')) * 1024 * 1024

    async def write_bytes(self, path: str, data: bytes) -> None:
        if len(data) >= self.quota:
            raise OSError(122, f'Disk quota exceeded writing {path}')
        await super().write_bytes(path, data)


def build(scratch: Path) -> QuotaDisk:
    """A new sandbox under the directory certify gives this factory."""
    return QuotaDisk(scratch)
