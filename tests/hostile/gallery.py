"""The hostile gallery: each backend of `backends.py`, how to certify it, and what its failures must say it did."""

from __future__ import annotations

from dataclasses import dataclass

HUNG = r'hung after [0-9.]+ s'
REMEMBERED = r'did not return within [0-9.]+ s: backend\.\w+\(.*\) hung in rule \S+ earlier'
"""A later rule's failure on an operation that hung earlier in the session (given a short grace, not its guard)."""
DEAF = r'did not respond to cancellation'
SCALE_ARTEFACT = (
    r'hung after [0-9.]+ s|within [0-9.]+ s|not returned [0-9.]+ s after|ran past [0-9.]+ s|did not finish in [0-9.]+ s'
    r'|WorkspaceTimeoutError|timed out|timeout'
)
"""What a rule may also fail with at these tiny time scales, where slow-but-correct work outlives a scaled bound."""


@dataclass(frozen=True)
class Hostile:
    """One hostile backend of the gallery, and what its certification must show."""

    name: str
    """Its factory in `tests.hostile.backends`."""
    says: str
    """A regex: what a failure caused by the hostile behaviour says the backend did."""
    sentinels: tuple[str, ...] = ()
    """Rules that certainly meet the hostile behaviour: each must fail saying so."""
    scale: float = 0.05
    loops: str = 'asyncio'
    extra: tuple[str, ...] = ()
    """More `certify` arguments (`--fresh ...`)."""
    target: str | None = None
    """The TARGET, when it is not the factory of `name`."""
    complete: bool = True
    """False when the backend ignores cancellation: the watchdog stops the run after the rule it hung."""
    expected_seconds: float = 20.0
    """About how long its certification takes alone, to start the longest first when several run at once."""
    max_seconds: float | None = None
    """A wall-time limit tighter than the catalog's bound (the hang shapes at time scale 1: 5 minutes)."""
    stops: str | None = None
    """A regex: the one line `certify` stops with before any rule, when its preflight finds the backend unusable."""

    @property
    def id(self) -> str:
        return self.name if self.loops == 'asyncio' else f'{self.name}-{self.loops}'


GALLERY = (
    # The hang shapes run at time scale 1, as a real certification does: each must end within 5 minutes.
    Hostile(
        'hangs_everywhere',
        says='',
        scale=1.0,
        stops=r"target 'tests\.hostile\.backends:hangs_everywhere' working_dir\(\) did not answer within 30 s "
        r'\(on asyncio\); hint: a slow provider\? raise --conformance-time-scale$',
        expected_seconds=40,
        max_seconds=60,
    ),
    Hostile(
        'hanging_reads',
        says=rf'{HUNG}: backend\.read_bytes\(.*\) never returned|backend\.read_bytes\(.*\) {REMEMBERED}',
        sentinels=('bytes_round_trip_and_write_creates_parents', 'empty_file_round_trip'),
        scale=1.0,
        expected_seconds=150,
        max_seconds=300,
    ),
    Hostile(
        'hangs_on_create',
        says=rf'{HUNG}: backend\.\w+\(.*\) never returned|{REMEMBERED}',
        sentinels=('concurrent_first_use_shares_one_environment', 'cancellation_mid_create_keeps_the_ref'),
        scale=1.0,
        target='tests.hostile.backends:local',
        extra=('--fresh', 'tests.hostile.backends:hangs_on_create'),
        expected_seconds=150,
        max_seconds=300,
    ),
    Hostile(
        'hangs_on_cleanup',
        says=(
            r'removing the scratch directory .* did not finish in [0-9.]+ s|backend\.remove\(.*\) never returned'
            rf'|backend\.remove\(.*\) {REMEMBERED}'
        ),
        sentinels=('bytes_round_trip_and_write_creates_parents', 'empty_file_round_trip'),
        scale=1.0,
        expected_seconds=150,
        max_seconds=300,
    ),
    Hostile(  # at time scale 0.05 the first call's bound is 1.5 s: the 30 s creation is caught before any rule
        'slow_creation',
        says='',
        stops=r"target 'tests\.hostile\.backends:slow_creation' working_dir\(\) did not answer within 1\.5 s",
        expected_seconds=10,
    ),
    Hostile(
        'blocking_reads',
        says=rf'{DEAF} at its hang guard \([0-9.]+ s\): backend\.read_bytes\(.*\) never returned',
        scale=0.01,
        complete=False,
        expected_seconds=20,
    ),
    Hostile(
        'blocking_reads',
        says=rf'{DEAF} at its hang guard \([0-9.]+ s\): backend\.read_bytes\(.*\) never returned',
        scale=0.01,
        loops='trio',
        complete=False,
        expected_seconds=20,
    ),
    Hostile(
        'shielded_stat',
        says=rf'{DEAF} at its hang guard \([0-9.]+ s\): backend\.stat\(.*\) never returned|{HUNG}: backend\.stat',
        scale=0.01,
        complete=False,
        expected_seconds=30,
    ),
    Hostile(
        'shielded_stat',
        says=rf'{DEAF} at its hang guard \([0-9.]+ s\): backend\.stat\(.*\) never returned|{HUNG}: backend\.stat',
        scale=0.01,
        loops='trio',
        complete=False,
        expected_seconds=30,
    ),
    Hostile(
        'raises_base_exception',
        says=r'raised ProviderPanic: the provider SDK panicked in \w+ \(a BaseException, not an Exception\)',
        sentinels=('exists_of_the_working_dir_is_true', 'bytes_round_trip_and_write_creates_parents'),
    ),
    Hostile(
        'raises_unprintable',
        says=r'raised Unprintable: <str\(\) of this exception raised>',
        sentinels=('exists_of_the_working_dir_is_true', 'bytes_round_trip_and_write_creates_parents'),
    ),
    Hostile(
        'raises_exception_group',
        says=r'raised ExceptionGroup: \w+ failed on every replica \(2 sub-exceptions\)',
        sentinels=('exists_of_the_working_dir_is_true', 'bytes_round_trip_and_write_creates_parents'),
    ),
    Hostile(
        'returns_none',
        says=r'backend\.read_bytes\(.*\) returned None, not bytes',
        sentinels=('read_bytes_returns_bytes', 'bytes_round_trip_and_write_creates_parents'),
        expected_seconds=30,
    ),
    Hostile(
        'returns_str',
        says=r'backend\.read_bytes\(.*\) returned a str, not bytes',
        sentinels=('read_bytes_returns_bytes', 'bytes_round_trip_and_write_creates_parents'),
        expected_seconds=30,
    ),
    Hostile(
        'returns_dicts',
        says=r'backend\.(stat|list_dir)\(.*\) returned a (dict|list holding a dict), not (a FileEntry|only FileEntry)',
        sentinels=('stat_returns_a_file_entry_with_exact_types', 'list_dir_returns_entries_under_the_directory'),
        expected_seconds=30,
    ),
    Hostile(
        'negative_exit_codes',
        says=r'backend\.run\(.*\) returned exit code -\d+, which no process exits with',
        sentinels=('a_missing_program_exits_127', 'exit_codes_0_to_255_round_trip'),
    ),
    Hostile(
        'huge_exit_codes',
        says=r'backend\.run\(.*\) returned exit code \d{19,}, which no process exits with',
        sentinels=('a_missing_program_exits_127', 'exit_codes_0_to_255_round_trip'),
    ),
    Hostile(
        'floods_output',
        scale=0.25,  # each failure copies 100 MiB strings: slow, but not a hang
        says=r'x{64}|\b1\d{8}\b|characters cut',
        sentinels=('result_reports_exit_code_stdout_and_stderr', 'command_output_is_complete'),
        expected_seconds=55,
    ),
    Hostile(
        'prints_flood',
        says=r'ConnectionError: the provider SDK failed reading the file',
        sentinels=('read_bytes_returns_bytes', 'bytes_round_trip_and_write_creates_parents'),
    ),
    Hostile('spawns_immortals', says=r'(?!)'),
    Hostile(
        'destroys_itself',
        # Its own words, or those of LocalWorkspaceBackend, which from pydantic-ai 2.78 checks its directory on each
        # call, when a call reaches it before this instance's count runs out: both say the directory is gone.
        says=r'the environment at .* destroyed itself|local workspace directory .*/destroys-itself does not exist',
        sentinels=('a_missing_program_exits_127', 'exists_of_the_working_dir_is_true'),
    ),
)
