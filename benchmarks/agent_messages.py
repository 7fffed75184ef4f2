"""The agent's cost per dealer message, against the length of the hand.

Within a hand each MATCHSTATE repeats the whole betting so far plus the new
action, so an agent that parses every message from scratch pays for the hand's
length on every message (issue 8 item 11: 0.076 ms in a short hand, 1.0 ms at
199 actions). ``agent.client.Session`` resumes from the previous message's
betting (``poker.protocol.MatchStateReader``) and applies only the new actions.

Measured here, in one process and one run, without sockets: the agent's whole
per-line path (``Session.receive``, a trivial strategy's ``act``,
``Session.answer``) for position 0 of heads-up no-limit hold'em
(``holdem.nolimit.2p.reverse_blinds``: stacks 20000, big blind 100), over hands
of 10, 50, 100 and 200 actions built by repeated minimum raises (a call closes
a round when it nears the 64-action limit; the last action folds). The anchor is
the same path with ``poker.protocol.parse_match_state`` parsing each message
in full (what the agent did before: it re-reads the whole betting and resumes
the state from the shared prefix cache). The hands of one length repeat the same
betting with other deals, so the prefix cache is cleared before each hand: no
message finds an earlier hand's entries.

Reported per hand length N: the mean cost of the last ten messages of the hand
(those carrying N-9 to N actions, half of them answered), and the mean cost
per message over the whole hand.

Run: ``.venv/bin/python benchmarks/agent_messages.py [--reps R]``. The last line
is the figure: ratio = anchor / ours (above 1, ours is cheaper).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.client import ParseMatchState, Session  # noqa: E402
from poker.deal import Dealer  # noqa: E402
from poker.gamedef import Game, load_game  # noqa: E402
from poker import protocol  # noqa: E402
from poker.protocol import parse_match_state, view_of  # noqa: E402
from poker.state import CALL, FOLD, Action, State  # noqa: E402
from strategies.base import make_strategy  # noqa: E402

GAME = load_game("holdem.nolimit.2p.reverse_blinds")
LENGTHS = (10, 50, 100, 200)
ROUND_ACTIONS = 60  # call before the round's 64-action limit stops raises
VIEWER = 0
LAST = 10  # the messages "at N actions": those carrying N-9..N actions

def hand_messages(actions: int, rep: int, dealer: Dealer) -> list[str]:
    """The views position 0 gets over hand ``rep`` of ``actions`` actions: minimum
    raises, a call to close a nearly full round, and a fold at the end."""
    deal, state = dealer.next_hand(), State(GAME)
    texts = [str(view_of(state, deal, hand_id=rep, viewer=VIEWER))]
    for k in range(actions):
        bounds = state.raise_bounds()
        action: Action
        if k == actions - 1:
            action = FOLD if state.can_fold() else CALL
        elif bounds is None or len(state.actions[state.round]) >= ROUND_ACTIONS:
            action = CALL
        else:
            action = Action.raise_to(bounds[0])
        state = state.apply(action)
        texts.append(str(view_of(state, deal, hand_id=rep, viewer=VIEWER)))
    if len(texts) != actions + 1 or sum(map(len, state.actions)) != actions:
        raise SystemExit(f"could not build a hand of {actions} actions")
    return texts

def per_message_ns(game: Game, hands: list[list[str]], parse: ParseMatchState | None) -> list[list[int]]:
    """Nanoseconds of the agent's path for each message of each hand, played in
    order by one session (``parse`` replaces the incremental reader)."""
    strategy = make_strategy("always-call", game)
    session = Session(game, strategy, parse=parse)
    clock = time.perf_counter_ns
    timings = []
    for texts in hands:
        protocol._PREFIX_CACHE.clear()
        row = []
        for text in texts:
            start = clock()
            turn = session.receive(text)
            if turn is not None:
                view, consumed = turn
                session.answer(text, consumed, view, strategy.act(view))
            row.append(clock() - start)
        timings.append(row)
    return timings

def best_means(hands: list[list[str]], parse: ParseMatchState | None, runs: int) -> tuple[float, float]:
    """The lowest, over ``runs`` runs, of the mean microseconds per message over
    the last :data:`LAST` messages of each hand and over whole hands (the lowest
    keeps other processes' noise out: this machine is shared)."""
    last, whole = [], []
    for _ in range(runs):
        timings = per_message_ns(GAME, hands, parse)
        last.append(statistics.fmean(t for row in timings for t in row[-LAST:]) / 1000)
        whole.append(statistics.fmean(t for row in timings for t in row) / 1000)
    return min(last), min(whole)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20, help="hands per length (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="runs per length and parser, best kept (default 5)")
    args = parser.parse_args()
    full: ParseMatchState = lambda text: parse_match_state(text, GAME)  # noqa: E731
    rows = []
    for actions in LENGTHS:
        dealer = Dealer(GAME, seed=actions)
        hands = [hand_messages(actions, rep, dealer) for rep in range(args.reps)]
        ours, anchor = best_means(hands, None, args.runs), best_means(hands, full, args.runs)
        rows.append((actions, ours[0], anchor[0], ours[1], anchor[1]))
    print(f"{GAME.num_players}-player no-limit, position {VIEWER}, always-call, {args.reps} hands per length, best of {args.runs} runs")
    print(f"{'actions':>7} {'ours@N us':>10} {'reparse@N us':>13} {'ratio':>6} {'ours mean us':>13} {'reparse mean us':>16}")
    for actions, ours_last, anchor_last, ours_mean, anchor_mean in rows:
        print(
            f"{actions:>7} {ours_last:>10.1f} {anchor_last:>13.1f} {anchor_last / ours_last:>6.1f}"
            f" {ours_mean:>13.1f} {anchor_mean:>16.1f}"
        )
    _, ours_last, anchor_last, _, _ = rows[-1]
    print(
        f"agent per-message cost at {LENGTHS[-1]} actions: {ours_last:.1f} us vs {anchor_last:.1f} us"
        f" ratio {anchor_last / ours_last:.1f}"
    )

if __name__ == "__main__":
    main()
