"""The `boxlite` and `smol` targets: pydantic-ai-harness's local micro-VM sandboxes, run only where a VM boots.

Whether a micro-VM boots on a host is known only by booting one, which takes up to a minute where it fails
(the engines wait 30 s for the guest), far too long for `workspace-conformance targets`. So the boot probe
runs once, from `ci/services/boxlite.sh up` or `smol.sh up` (`python -m workspace_conformance.targets.boot_probe
NAME`), and records its outcome in `$WC_SERVICES/NAME/boot-probe.json`; each target's `missing()` does
the cheap checks itself (SDK installed, /dev/kvm usable) and reads that record, once per process.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic_ai.workspaces import SupportsCommands, WorkspaceBackend, WorkspaceRef

from ._ledger import read_refs
from ._probe import first_line, missing_module
from .base import NamedTarget, Target, TargetOption, created_ref

__all__ = ('BOOT_PROBE_FILE', 'BOXLITE', 'PROBE_TIMEOUT', 'SMOL', 'boot_record_path', 'probe_boot')

BOOT_PROBE_FILE = 'boot-probe.json'
SERVICES_DEFAULT = '/tmp/workspace-conformance-services'
"""Where ci/services keeps its state unless `WC_SERVICES` says otherwise (as ci/services/lib.sh does)."""
PROBE_TIMEOUT = 90.0
"""Seconds the boot probe waits for a VM to boot and run `echo`; both engines give up on a guest after 30 s."""
KVM = Path('/dev/kvm')


@dataclass(frozen=True)
class _MicroVM:
    name: str
    sdk: str
    """The import name of the SDK the harness module needs (its `pydantic-ai-harness[EXTRA]` has the same name)."""
    distribution: str


_BOXLITE = _MicroVM('boxlite', 'boxlite', 'boxlite')
_SMOL = _MicroVM('smol', 'smol', 'smolmachines')


def boot_record_path(name: str) -> Path:
    """The file the boot probe of target `name` writes and its `missing()` reads."""
    return Path(os.environ.get('WC_SERVICES') or SERVICES_DEFAULT) / name / BOOT_PROBE_FILE


def _boot_id() -> str:
    try:
        return Path('/proc/sys/kernel/random/boot_id').read_text(encoding='utf-8').strip()
    except OSError:
        return ''


def _sdk_version(vm: _MicroVM) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f'{vm.distribution} {version(vm.distribution)}'
    except PackageNotFoundError:
        return f'{vm.distribution} (not installed)'


@functools.cache
def _missing(vm: _MicroVM) -> str | None:
    """`None` when a VM booted here under this SDK since the machine started, else one line saying why not."""
    absent = missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_module(
        vm.sdk, f'"pydantic-ai-harness[{vm.name}]"'
    )
    if absent:
        return absent
    if not KVM.exists():
        return 'no /dev/kvm: this host has no KVM (enable virtualization, or nested virtualization in its VM)'
    if not os.access(KVM, os.R_OK | os.W_OK):
        return 'cannot open /dev/kvm: add this user to the group that owns it (usually kvm)'
    unprivileged = KVM.stat().st_mode & 0o006 != 0o006
    if vm is _SMOL and os.geteuid() == 0 and os.environ.get('SMOLVM_VM_UID_DROP') != 'off' and unprivileged:
        return (
            'as root smolvm runs each VM as its own unprivileged uid, which cannot open /dev/kvm here '
            '(libkrun: KvmOpen(Error(13))): set SMOLVM_VM_UID_DROP=off (ci/services/smol.sh does)'
        )
    path = boot_record_path(vm.name)
    try:
        record = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return (
            f'boot not probed here: run `bash ci/services/{vm.name}.sh up`, which boots a test VM (up to a '
            f'minute) and records the outcome in {path}'
        )
    if record.get('boot_id') != _boot_id() or record.get('sdk') != _sdk_version(vm):
        return f'the boot probe in {path} is from another boot or SDK: run `bash ci/services/{vm.name}.sh up` again'
    if not record.get('booted'):
        return f'the micro-VM does not boot here: {record.get("reason") or "no reason recorded"}'
    return None


def _working_dir(options: Mapping[str, str]) -> str:
    return options.get('working-dir') or '/workspace'


def _new_vm_each_time(
    vm: _MicroVM,
    description: str,
    new: Callable[[Path], WorkspaceBackend],
    attach: Callable[[Path, WorkspaceRef], WorkspaceBackend],
    destroy: Callable[[WorkspaceBackend], Awaitable[None]],
    *,
    cleanup: Callable[[Path], None] | None = None,
) -> Target:
    """A micro-VM target on asyncio whose shared, fresh and destructive backends are each a new VM from `new`."""
    return Target(
        name=vm.name,
        description=description,
        backend=new,
        fresh_backend=new,
        destructive_backend=new,
        attach_backend=attach,
        destroy_environment=destroy,
        cleanup=cleanup,
        event_loops=('asyncio',),
    )


def _boxlite(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.boxlite_sandbox import BoxLiteSandbox, BoxLiteSandboxBackend

    working_dir = _working_dir(options)
    box_options = {'rootfs_path': options['rootfs']} if 'rootfs' in options else None
    capability = BoxLiteSandbox(working_dir=working_dir)

    def home(scratch: Path) -> None:
        # A BoxLite home serves one process (a second one opening it panics), so each process of the run
        # (one per xdist worker) gets its own under the run's directory, removed with it. The SDK reads
        # BOXLITE_HOME when this process first opens its runtime, which is after the first backend is built.
        run_dir = scratch.parent
        if Path(os.environ.get('BOXLITE_HOME', '/')).parent != run_dir:
            os.environ['BOXLITE_HOME'] = str(run_dir / f'boxlite-{os.getpid()}')

    def new(scratch: Path) -> WorkspaceBackend:
        home(scratch)
        backend: WorkspaceBackend = BoxLiteSandboxBackend(
            image=options.get('image'), working_dir=working_dir, box_options=box_options
        )
        return backend

    def attach(scratch: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        home(scratch)
        backend: WorkspaceBackend = capability.backend(ref)
        return backend

    async def destroy(backend: WorkspaceBackend) -> None:
        await capability.destroy(created_ref(backend, 'box'))

    source = f'OCI layout {options["rootfs"]}' if 'rootfs' in options else f'image {options.get("image", "alpine")}'
    # Boxes live in per-process BoxLite homes under the run's directory: the run's end stops every process working
    # there (the VM engines included) and removes the directory, disks and all. The SDK returns asyncio futures.
    return _new_vm_each_time(
        _BOXLITE,
        f"pydantic-ai-harness's BoxLiteSandboxBackend, a local BoxLite micro-VM from {source}",
        new,
        attach,
        destroy,
    )


def _smol(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.smol_sandbox import SmolSandbox, SmolSandboxBackend

    working_dir = _working_dir(options)
    capability = SmolSandbox(working_dir=working_dir)

    def new(_: Path) -> WorkspaceBackend:
        backend: WorkspaceBackend = SmolSandboxBackend(image=options.get('image'), working_dir=working_dir)
        return backend

    async def destroy(backend: WorkspaceBackend) -> None:
        await capability.destroy(created_ref(backend, 'VM'))

    def cleanup(run_root: Path) -> None:
        # smolvm keeps its VMs in the user's data directory, outside the run's: destroy every one recorded.
        async def destroy_all() -> None:
            for ref in read_refs(run_root):
                try:
                    await capability.destroy(ref)
                except Exception:
                    continue

        anyio.run(destroy_all)

    source = f'image {options["image"]}' if 'image' in options else "smolvm's bundled Alpine"
    # The smol SDK's calls run on asyncio threads.
    description = f"pydantic-ai-harness's SmolSandboxBackend, a local smolvm micro-VM from {source}"
    return _new_vm_each_time(_SMOL, description, new, lambda _, ref: capability.backend(ref), destroy, cleanup=cleanup)


_WORKING_DIR = TargetOption('working-dir', 'absolute working directory in the VM (default /workspace)')


def _micro_vm_target(
    vm: _MicroVM, description: str, build: Callable[[Mapping[str, str], str], Target], *options: TargetOption
) -> NamedTarget:
    """A harness micro-VM target named after `vm`: missing while `vm` cannot boot here, and taking `--working-dir`."""
    return NamedTarget(
        name=vm.name,
        description=description,
        build=build,
        missing=lambda _: _missing(vm),
        options=(*options, _WORKING_DIR),
        extra='harness',
    )


BOXLITE = _micro_vm_target(
    _BOXLITE,
    "pydantic-ai-harness's BoxLiteSandboxBackend, a BoxLite micro-VM on this machine (needs KVM)",
    _boxlite,
    TargetOption('rootfs', 'local OCI image layout for new boxes (a directory with oci-layout and index.json)'),
    TargetOption('image', "registry image for new boxes, pulled (default: BoxLite's Alpine)"),
)

SMOL = _micro_vm_target(
    _SMOL,
    "pydantic-ai-harness's SmolSandboxBackend, a smolvm micro-VM on this machine (needs KVM)",
    _smol,
    TargetOption('image', "registry image for new VMs, pulled (default: smolvm's bundled Alpine, no pull)"),
)


def _kernel_log() -> list[str]:
    """The kernel's log lines (root only; empty where `dmesg` is refused)."""
    try:
        done = subprocess.run(['dmesg'], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return done.stdout.splitlines() if done.returncode == 0 else []


def _engine_error(scratch: Path) -> str:
    """`' (libkrun: <error>)'` from the first KVM exit the VM engine logged under `scratch`, else `''`."""
    for log in sorted(scratch.rglob('*.log*')):
        try:
            lines = log.read_text(encoding='utf-8', errors='replace').splitlines()
        except OSError:
            continue
        for line in lines:
            if 'KVM_EXIT' in line:
                return f' (libkrun: {line.split("]", 1)[-1].strip()})'
    return ''


async def _boot_once(target: Target, scratch: Path, timeout: float) -> None:
    backend = target.backend(scratch / 'asyncio')
    if not isinstance(backend, SupportsCommands):
        raise TypeError(f'{target.name} built a backend without commands')
    try:
        with anyio.fail_after(timeout):
            result = await backend.run(['echo', 'booted'])
        if result.exit_code != 0 or result.stdout != 'booted\n':
            raise RuntimeError(f'`echo booted` exited {result.exit_code} and printed {result.stdout!r}')
    finally:
        if backend.ref is not None and target.destroy_environment is not None:
            with anyio.move_on_after(60, shield=True), contextlib.suppress(Exception):
                await target.destroy_environment(backend)


def probe_boot(name: str, options: Mapping[str, str], timeout: float = PROBE_TIMEOUT) -> dict[str, object]:
    """Boot one VM of target `name` and run `echo` in it: the record `missing()` reads (booted, reason, seconds)."""
    vm = {'boxlite': _BOXLITE, 'smol': _SMOL}[name]
    named = {'boxlite': BOXLITE, 'smol': SMOL}[name]
    before = _kernel_log()
    started = time.monotonic()
    reason = ''
    with tempfile.TemporaryDirectory(prefix=f'wc-{name}-probe-') as scratch:
        target = named.build(named.values(dict(options)), 'boot-probe')
        try:
            anyio.run(_boot_once, target, Path(scratch), timeout)
        except TimeoutError:
            reason = f'no VM booted and ran `echo` within {timeout:g} s'
        except BaseException as error:  # the engines report some failures as Rust panics (BaseException)
            if isinstance(error, KeyboardInterrupt):
                raise
            reason = f'{type(error).__name__}: {" ".join(str(error).split())}'
        if reason and 'KVM_EXIT' not in reason:
            reason += _engine_error(Path(scratch))
        if target.cleanup is not None:
            target.cleanup(Path(scratch))
    kernel = [line for line in _kernel_log()[len(before) :] if 'kvm' in line.lower()]
    if reason and kernel:
        reason += f' (kernel: {first_line(kernel[-1].split("]", 1)[-1])})'
    return {
        'target': name,
        'booted': not reason,
        'reason': reason,
        'seconds': round(time.monotonic() - started, 1),
        'boot_id': _boot_id(),
        'sdk': _sdk_version(vm),
    }
