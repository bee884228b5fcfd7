"""Test doubles for workspace backends: in-memory filesystem, scripted commands, a provider model, faults."""

from .capability import ProviderCapability
from .commands import CommandCall, Handler, ScriptedCommands, ScriptedMemoryBackend, result
from .faults import FaultyBackend, Injection
from .memory import InMemoryBackend, memory_symlink
from .provider import (
    InMemoryProvider,
    ProviderBackend,
    ProviderCommandsBackend,
    ProviderSetupError,
    ProviderTransientError,
)
from .shapes import CommandsOnly, FilesOnly
from .switches import memory_backend

__all__ = (
    'CommandCall',
    'CommandsOnly',
    'FaultyBackend',
    'FilesOnly',
    'Handler',
    'InMemoryBackend',
    'InMemoryProvider',
    'Injection',
    'ProviderBackend',
    'ProviderCapability',
    'ProviderCommandsBackend',
    'ProviderSetupError',
    'ProviderTransientError',
    'ScriptedCommands',
    'ScriptedMemoryBackend',
    'memory_backend',
    'memory_symlink',
    'result',
)
