"""Run one command as a Linux child subreaper, then report, as JSON, how it ended and every process it left behind.

Every orphan of the command's process tree is re-parented to the probe instead of to init, so after the command
exits, any process still alive below the probe is a leftover, however it detached. The probe ends them afterwards.

    python -m tests.hostile.probe --timeout 300 --output DIR [--started FILE --interrupts 2 --gap 1 --signal TERM] \
        -- COMMAND...
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir('/proc'):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, 'stat').read_text()
        except OSError:
            continue
        fields = stat.rsplit(')', 1)[1].split()
        if fields[0] in ('Z', 'X'):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(root: int) -> list[int]:
    """Live processes below `root`, from `/proc`."""
    children = _children_map()
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _describe(pid: int) -> str:
    try:
        argv = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
    except OSError:
        return f'{pid} (gone)'
    return f'{pid} ' + ' '.join(part.decode(errors='replace') for part in argv if part)[:200]


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--timeout', type=float, required=True)
    parser.add_argument('--output', type=Path, required=True)
    parser.add_argument('--started', type=Path, help='send the interrupts once this file exists')
    parser.add_argument('--interrupts', type=int, default=0)
    parser.add_argument('--gap', type=float, default=1.0, help='seconds between interrupts')
    parser.add_argument('--signal', default='INT', help='the signal each interrupt sends: INT, TERM, HUP, KILL')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_CHILD_SUBREAPER) failed')
    args.output.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    interrupted_at: list[float] = []
    with open(args.output / 'stdout', 'wb') as out, open(args.output / 'stderr', 'wb') as err:
        # A shell runs background jobs with Ctrl-C ignored, and children inherit that: give the command the default.
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        timed_out = False
        while process.poll() is None:
            now = time.monotonic() - started
            if now > args.timeout:
                timed_out = True
                for pid in descendants(os.getpid()):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                process.wait()
                break
            ready = args.started is None or args.started.exists()
            due = not interrupted_at or now - interrupted_at[-1] >= args.gap
            if ready and due and len(interrupted_at) < args.interrupts:
                process.send_signal(signal.Signals[f'SIG{args.signal}'])
                interrupted_at.append(now)
            time.sleep(0.05)
    ended = time.monotonic() - started
    time.sleep(0.5)  # anything a dying process started is re-parented here by now
    _reap()
    left = descendants(os.getpid())
    leftovers = [_describe(pid) for pid in left]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    _reap()
    result = {
        'returncode': process.returncode,
        'wall': ended,
        'timed_out': timed_out,
        'interrupted_at': interrupted_at,
        'leftovers': leftovers,
    }
    sys.stdout.write(json.dumps(result) + '\n')


if __name__ == '__main__':
    main()
