"""A whole local match as a library: what it is (:mod:`arena.match.plan`), the
seat runner that plays one seating of any match, with our strategies, commands
or remote agents in its seats (:mod:`arena.match.seats`), a plan played
through it (:mod:`arena.match.run`) and its results
(:mod:`arena.match.results`). ``arena match`` (:mod:`arena.commands.match`) is
its front end; tournaments play their matches through it too.
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
    agent_spec as agent_spec,
    AGENT_EXIT_S as AGENT_EXIT_S,
    AGENT_GONE_S as AGENT_GONE_S,
    PLAN_FORMAT as PLAN_FORMAT,
    DEFAULT_T_RESPONSE_MS as DEFAULT_T_RESPONSE_MS,
    DEFAULT_T_HAND_MS as DEFAULT_T_HAND_MS,
    DEFAULT_T_PER_HAND_MS as DEFAULT_T_PER_HAND_MS,
    NO_START_TIMEOUT as NO_START_TIMEOUT,
)
from arena.match.seats import (
    InProcess as InProcess,
    Command as Command,
    Remote as Remote,
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
)
from arena.match.run import (
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
