"""Every built-in target by name, and what each one needs to run here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .base import NamedTarget, Target
from .bubblewrap import BUBBLEWRAP
from .cloud import DAYTONA, E2B, MODAL, SPRITES
from .docker import DOCKER, PODMAN
from .doubles import MEMORY, PROVIDER
from .e2b_local import E2B_LOCAL
from .local import local_target
from .local_shell import LOCAL_SHELL
from .microvm import BOXLITE, SMOL
from .ssh import SSH
from .windows import MEMORY_WINDOWS, WINDOWS

__all__ = ('NAMED_TARGETS', 'TargetStatus', 'target_statuses')


def _local(_: Mapping[str, str], run_id: str) -> Target:
    return local_target()


LOCAL = NamedTarget(
    name='local',
    description="pydantic-ai's LocalWorkspaceBackend in a temporary directory (the default)",
    build=_local,
)

NAMED_TARGETS: dict[str, NamedTarget] = {
    target.name: target
    for target in (
        *(LOCAL, LOCAL_SHELL, MEMORY, PROVIDER, DOCKER, PODMAN, SSH, BUBBLEWRAP, BOXLITE, SMOL),
        *(WINDOWS, MEMORY_WINDOWS),
        *(E2B, MODAL, DAYTONA, SPRITES, E2B_LOCAL),
    )
}


@dataclass(frozen=True)
class TargetStatus:
    """Whether a named target can run here with the given options, and if not, why."""

    target: NamedTarget
    missing: str | None

    @property
    def runnable(self) -> bool:
        """True when nothing the target needs is missing."""
        return self.missing is None


def target_statuses(options: Mapping[str, str | None]) -> list[TargetStatus]:
    """Each named target's status with the options that target takes (the others are ignored)."""
    statuses = []
    for target in NAMED_TARGETS.values():
        names = {option.name for option in target.options}
        values = target.values({name: value for name, value in options.items() if name in names})
        statuses.append(TargetStatus(target, target.missing(values)))
    return statuses
