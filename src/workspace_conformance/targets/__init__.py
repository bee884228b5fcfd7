"""Named certification targets: a backend with everything needed to certify it."""

from .base import NamedTarget, Target, TargetError, TargetNotRunnable, TargetOption
from .certification import CertificationSpec, suite_for
from .loading import resolve_target
from .local import LazyLocalBackend, local_target
from .registry import NAMED_TARGETS, TargetStatus, target_statuses

__all__ = (
    'NAMED_TARGETS',
    'CertificationSpec',
    'LazyLocalBackend',
    'NamedTarget',
    'Target',
    'TargetError',
    'TargetNotRunnable',
    'TargetOption',
    'TargetStatus',
    'local_target',
    'resolve_target',
    'suite_for',
    'target_statuses',
)
