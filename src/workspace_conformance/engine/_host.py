"""The host watch rules use: the process-wide audit hook of `runtime/host_audit.py`, as `authoring` exports it."""

from __future__ import annotations

from ..runtime.host_audit import HostEvent, HostWatch, calling, opens_for_writing, owning, watching_host

__all__ = ('HostEvent', 'HostWatch', 'calling', 'opens_for_writing', 'owning', 'watching_host')
