"""Tournaments: every pairing (triple) of the configured bots in duplicate
series, on a local process pool or a Dask cluster, with SQLite results,
resumable, scored and reported. The configuration file
(:mod:`arena.tournament.config`), the matches it schedules and how each is
played (:mod:`arena.tournament.play`, :mod:`arena.tournament.external` for ACPC
``startme.sh`` bots), and the runner with its database and report
(:mod:`arena.tournament.runner`). ``arena tournament`` is its front end
(:mod:`arena.commands.tournament`).
"""

from __future__ import annotations

from arena.tournament.runner import (
    Config as Config,
    ConfigError as ConfigError,
    Entrant as Entrant,
    MatchJob as MatchJob,
    MatchRecord as MatchRecord,
    TournamentError as TournamentError,
    load_config as load_config,
    parse_config as parse_config,
    play_match as play_match,
    report as report,
    run_tournament as run_tournament,
    schedule as schedule,
)
