"""A whole match as a library: what it is (:mod:`arena.match.plan`), the seat
runner that plays one seating of any match, with our strategies, commands,
remote agents or a person in its seats (:mod:`arena.match.seats`), a plan
played through it (:mod:`arena.match.run`, the only place that turns a match
into dealer runs) and its results (:mod:`arena.match.results`). ``arena
match`` (:mod:`arena.commands.match`) is its front end; tournaments, ``arena
play`` and the hosted arena with its web tables play their matches through it
too.
"""

from __future__ import annotations

from arena.match.plan import (
    MatchError as MatchError,
    Bot as Bot,
    MatchPlan as MatchPlan,
    SeatingResult as SeatingResult,
    Outcome as Outcome,
    seat_names as seat_names,
    agent_seed as agent_seed,
    resumed_seed as resumed_seed,
    components_path as components_path,
    values_path as values_path,
    agent_spec as agent_spec,
    PLAN_FORMAT as PLAN_FORMAT,
    AGENT_LIMITS as AGENT_LIMITS,
    PERSON_LIMITS as PERSON_LIMITS,
    NO_START_TIMEOUT as NO_START_TIMEOUT,
)
from arena.match.seats import (
    InProcess as InProcess,
    Command as Command,
    Remote as Remote,
    Person as Person,
    PersonSeat as PersonSeat,
    Seat as Seat,
    agent_command as agent_command,
    SeatEnd as SeatEnd,
    SeatingRun as SeatingRun,
    aborted_text as aborted_text,
    run_seating as run_seating,
    our_address as our_address,
    keep_output as keep_output,
    last_line as last_line,
    KEEP_BYTES as KEEP_BYTES,
    Stop as Stop,
    sigterm_as_interrupt as sigterm_as_interrupt,
    AGENT_EXIT_S as AGENT_EXIT_S,
    AGENT_GONE_S as AGENT_GONE_S,
)
from arena.match.run import (
    seating_config as seating_config,
    play_seating as play_seating,
    run_plan as run_plan,
    run_plan_with_signals as run_plan_with_signals,
)
from arena.match.results import (
    read_seating as read_seating,
    score_seatings as score_seatings,
    format_table as format_table,
    format_best as format_best,
    write_results as write_results,
    write_json as write_json,
)
