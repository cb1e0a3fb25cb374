"""Where the tests live and which are slow: shared by conftest.py (which puts the layers on
`sys.path` and marks the slow tests) and unit/test_layers.py (which checks both lists)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).parent
#: unit: the domain and the rules, no store; integration: a `Ledger` on a real store;
#: system: the `rin` command line end to end
LAYERS = ("unit", "integration", "system")

#: The tests that take about 1 s or more on the project's 2-core machine, measured with
#: `python -m pytest --durations=60` (seconds in the comments): by file, the names of its slow
#: tests (every parametrization of each), or `ALL` for the whole file. `-m "not slow"` skips them.
ALL: tuple[str, ...] = ()
SLOW: dict[str, tuple[str, ...]] = {
    "integration/test_views_postgres.py": (  # PostgreSQL views against SQLite's: 79 s, 59 s
        "test_every_report_answers_the_same_from_postgresql",
        "test_two_processes_projecting_into_postgresql_count_each_event_once",
    ),
    "integration/test_two_writers_same_lines.py": ALL,  # two writer processes, 3 races: 25 s
    "integration/test_writer_fairness.py": ALL,  # two writer processes, one race: 34 s
    "integration/test_projectors_concurrent.py": (  # two follower processes, a writer: 17 s
        "test_two_projecting_processes_count_each_event_once",),
    "integration/test_library_sharing.py": (  # writer threads against a reader: 5 s; a
        "test_a_snapshot_sums_to_a_committed_total_while_writers_run",  # spawned process
        "test_follow_waits_for_another_process_then_times_out",  # and a 3 s timeout: 5 s;
        "test_threads_may_share_one_ledger",  # 40 generations from 4 threads: 1.3 s
    ),
    "system/test_crash_safety.py": ALL,  # SIGKILLs `rin apply`/`rin project` subprocesses: 55 s
    "system/test_trade_crash.py": ALL,  # SIGKILLs writers between a sell and its buy
    "system/test_readme.py": ALL,  # every command of README.md, in a shell: 64 s
    "system/test_service_from_docs.py": ALL,  # threads, a second process, a follower: 9 s
    "system/test_readme_from_a_wheel.py": ALL,  # builds and installs a wheel: 25 s
    "system/test_datasette_browser.py": ALL,  # rin serve and headless Chromium: 96 s
    "integration/test_pending_table.py": ALL,  # a 1,500-2,400-line market a case: 1-2 s each
    "integration/test_model_based.py": ALL,  # the state machine and two broken ledgers: 38 s
    "integration/test_trades_model.py": ALL,  # the trades state machine, verify every step
    "unit/test_fuel_book.py": ("test_answers_equal_a_plain_dated_list",),  # hypothesis: 12 s
    "system/test_hostile_input.py": (  # the hostile streams: 7 s, 6 s
        "test_random_field_values_never_crash_and_store_nothing_when_rejected",
        "test_cli_on_binary_junk_exits_1_or_0_and_stores_nothing",
        "test_hostile_stream_stores_nothing_for_what_it_refuses",
    ),
    # a whole simulated market applied: 3.6 s; 2.6 s, 1.7 s; 2.2 s
    "integration/test_asof_rollup.py": (
        "test_the_rollup_equals_the_full_scan_on_a_simulated_market",),
    "integration/test_simulate.py": (
        "test_a_simulated_market_applies_with_no_rejection",
        "test_bad_lines_are_rejected_and_only_they",
    ),
    "integration/test_chain_mapping.py": (
        "test_every_event_of_a_market_maps_to_the_same_values_and_chain",),
    # processes and threads racing on one store: 3.2 s, 3.0 s, 2.6 s, 1.2 s
    "integration/test_concurrency.py": ALL,
    "integration/test_trade_races.py": ALL,  # two processes race over each posting
    "integration/test_stores.py": ("test_two_processes_never_spend_the_same_rins_twice",),
    "integration/red_team/test_write_skew.py": (
        "test_no_transfer_or_retirement_is_stored_after_the_finding",),
    "integration/red_team/test_threads.py": ALL,
    # `rin` run as a subprocess: 4.0 s, 2.2 s; store failures seen through it: 20 s in all
    "integration/test_projections_rebuild.py": (
        "test_killed_projection_resumes_without_loss_or_duplicates",
        "test_verify_cli_exit_codes",
    ),
    "integration/red_team/test_failures.py": (
        "test_attack_read_only_data_folder_exits_3",
        "test_attack_lock_held_beyond_the_timeout_exits_3",
        "test_attack_disk_full_exits_3_after_reporting_every_committed_line",
        "test_attack_read_only_store_file_exits_3",
        "test_attack_malformed_database_file_exits_3",
        "test_attack_postgresql_down_exits_3",
    ),
    "integration/red_team/test_input.py": (
        "test_bom_at_the_start_of_each_file_is_skipped_elsewhere_named",
        "test_attack_a_huge_line_is_refused_early_in_bounded_memory",
    ),
    "integration/red_team/test_keys.py": ("test_a_signed_store_refuses_writes_without_its_key",),
    # four simulated markets applied, every party-quarter checked, attests replayed: 7 s CPU
    "integration/test_activity_property.py": ALL,
    # `rin` on a pseudo-terminal or a pipe, as a subprocess: 18 s (three), 7.4 s, 6.8 s, 6.3 s;
    # three demos in one process: 3.8 s
    "system/test_cli_conventions.py": (
        "test_apply_progress_on_a_terminal_counts_lines_exactly_and_nothing_when_piped",
        "test_a_table_written_to_a_pipe_is_never_wrapped",
        "test_a_table_on_a_terminal_fits_its_width",
    ),
    "system/test_no_silent_traps.py": (
        "test_a_reports_catch_up_shows_progress_on_a_terminal_only",),
    "system/test_demo.py": ("test_demo_quiet_prints_nothing",),
    "system/test_national.py": ALL,  # scripts/national.py, four child processes: 24 s
}


def is_slow(path: str, name: str) -> bool:
    """Whether test `name` (`test_y[sqlite]`) of the file at `path` relative to tests/ is slow."""
    names = SLOW.get(path)
    return names is not None and (names == ALL or name.partition("[")[0] in names)
