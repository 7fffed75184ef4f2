"""The seat of a person: an ACPC connection whose decisions wait for them.

:class:`HumanSeat` plays its seat with :func:`agent.client.play`, whose
``decide`` hook here parks the decision until a frontend (web page, terminal)
submits an action. The seat, not the frontend, holds everything the person
sees: the hand in progress, the last finished hand until they have looked at it,
the running result and the hand history. So a page that reloads or loses its
connection simply asks for :meth:`HumanSeat.snapshot` again and carries on, and
the seat itself lives as long as the match: folding, reloading or closing the
tab never gives it up (the dealer's clocks still run, as for any agent); only
:meth:`HumanSeat.leave` does, which ends the match. When the match ends
otherwise than by playing out (:meth:`HumanSeat.end`: the dealer aborted),
the open decision closes with it, so a table never stays "your turn" on a
match that is over.

Everything a frontend sends goes through :func:`parse_message` (size, JSON
shape, types) and :meth:`HumanSeat.act` (the decision it answers must be the
open one, and the action legal by :meth:`poker.state.State.verify`), so a
message can be refused but never take the seat down. Legality, raise bounds and
results all come from :mod:`poker`; the streets, their amounts and the bet
presets from :mod:`agent.human.streets`, so a frontend only draws numbers it
is sent.

The seat also keeps every seat's clock as it sees it (a turn begins with the
view that puts a seat to act and ends with the next view), so a table can show
the time left for the bots too; the dealer's own clock is the one that counts.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import trio

from agent.client import AgentError, play
from agent.human.streets import big_blind, describe, raise_presets, round_names, street_base, streets, verb
from poker.cards import card_to_text
from poker.gamedef import Game
from poker.hand_name import hand_name
from poker.hand_rank import hand_values
from poker.protocol import MatchState
from poker.state import CALL, Action, ActionType, IllegalActionError, State
from poker.stats import interval_note, interval_shown, mean_ci, unit_of
from strategies.base import Strategy

__all__ = [
    "MAX_MESSAGE_BYTES",
    "HISTORY_HANDS",
    "GRAPH_POINTS",
    "Limits",
    "MessageError",
    "Act",
    "Next",
    "Leave",
    "LEFT",
    "parse_message",
    "parse_action",
    "HumanSeat",
    "betting_words",
]

#: The largest message a frontend may send (a real one is under 100 bytes).
MAX_MESSAGE_BYTES: Final = 1024
#: Finished hands kept for the history panel (the log keeps them all).
HISTORY_HANDS: Final = 100
#: What the history keeps of each action (the table's replay needs more).
_TOLD: Final = ("name", "action", "verb", "amount", "all_in", "text")
#: Points of the session graph at most (a long match is sampled evenly).
GRAPH_POINTS: Final = 200
#: What the table says once the person left it (a frontend may add what leaving costs).
LEFT: Final = "you left the table"
_ACTION_WORDS: Final = {"fold": ActionType.FOLD, "call": ActionType.CALL, "check": ActionType.CALL, "raise": ActionType.RAISE}
_MAX_SIZE: Final = 2**31
_TYPED: Final = re.compile(r"(f|fold|c|call|k|check|r|raise) *(\d{1,12})?")
_LETTERS: Final = {"f": "fold", "c": "call", "k": "check", "r": "raise"}


class MessageError(ValueError):
    """A message from a frontend that is refused; the text says why in one line."""


@dataclass(frozen=True)
class Limits:
    """The dealer's time limits for the seat, in milliseconds (the per-action
    clock shows what is left of the tightest one)."""

    response_ms: int
    hand_ms: int
    match_ms: int


@dataclass(frozen=True)
class Act:
    """Take ``action`` in the decision numbered ``decision`` (``size``: None when
    the message gave none)."""

    decision: int
    kind: ActionType
    size: int | None


@dataclass(frozen=True)
class Next:
    """The person has seen the finished hand: show the next one."""


@dataclass(frozen=True)
class Leave:
    """The person leaves the table: the match ends there."""


def parse_message(raw: str | bytes) -> Act | Next | Leave:
    """A frontend message: ``{"type": "act", "decision": N, "action":
    "fold"|"call"|"check"|"raise", "size": S}`` (``size`` only for a no-limit
    raise, which :meth:`HumanSeat.act` checks as it knows the game) or
    ``{"type": "next"}`` or ``{"type": "leave"}``.

    Raises:
        MessageError: too long, not JSON, or not one of those shapes.
    """
    if len(raw) > MAX_MESSAGE_BYTES:
        raise MessageError(f"message longer than {MAX_MESSAGE_BYTES} bytes")
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        raise MessageError("message is not JSON") from None
    if not isinstance(message, dict):
        raise MessageError("message is not a JSON object")
    kind = message.get("type")
    if kind in ("next", "leave"):
        if set(message) != {"type"}:
            raise MessageError(f"a {kind} message has no other fields")
        return Next() if kind == "next" else Leave()
    if kind != "act":
        raise MessageError("message type must be 'act', 'next' or 'leave'")
    if not set(message) <= {"type", "decision", "action", "size"} or not {"decision", "action"} <= set(message):
        raise MessageError("an act message has the fields type, decision, action and, for a raise, size")
    decision, word, size = message["decision"], message["action"], message.get("size")
    if not _is_int(decision) or not 0 <= decision < _MAX_SIZE:
        raise MessageError("decision must be a whole number")
    if not isinstance(word, str) or word not in _ACTION_WORDS:
        raise MessageError(f"action must be one of {', '.join(_ACTION_WORDS)}")
    if size is not None and (not _is_int(size) or not 0 <= size < _MAX_SIZE):
        raise MessageError(f"size must be a whole number of chips below {_MAX_SIZE}")
    return Act(decision, _ACTION_WORDS[word], size)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_action(text: str, state: State) -> Action:
    """A person's typed action for ``state``: ``f``/``fold``, ``c``/``call``/
    ``k``/``check``, ``r``/``raise`` (limit), ``r N``/``rN``/``raise N`` (no-limit:
    bet or raise to N chips in front this street, as a table counts them; the
    action carries the hand total the dealer wants). Legality is checked by
    :meth:`HumanSeat.act`, not here.

    Raises:
        MessageError: none of those shapes, or a size outside the legal range.
    """
    match = _TYPED.fullmatch(text.strip().lower())
    if match is None:
        raise MessageError(f"not an action: {text.strip()[:40]!r}; type f, c, or r (r N raises to N in no-limit)")
    kind = _ACTION_WORDS[_LETTERS.get(match[1], match[1])]
    if match[2] is not None and (kind is not ActionType.RAISE or state.game.is_limit):
        raise MessageError(f"{match[1]} takes no amount here")
    if kind is not ActionType.RAISE or state.game.is_limit:
        return Action(kind)
    bounds, base = state.raise_bounds(), street_base(state)
    where = "" if bounds is None else f" ({bounds[0] - base}..{bounds[1] - base})"
    if match[2] is None:
        raise MessageError(f"say how much: r N raises to N chips this street{where}")
    size = int(match[2])
    if bounds is not None and not bounds[0] <= size + base <= bounds[1]:
        raise MessageError(f"{size} chips is outside the legal range{where}")
    return Action.raise_to(size + base)


def betting_words(final: State) -> list[list[tuple[int, str, int]]]:
    """Each round's actions of ``final`` as (position, words, pot after it),
    replayed through :class:`State` so a call reads as a check when nothing
    was owed, and raises show their total (also the hosted arena's replayer)."""
    state = State(final.game)
    rounds: list[list[tuple[int, str, int]]] = []
    for round_ in range(final.round + 1):
        words = []
        for action, position in zip(final.actions[round_], final.actors[round_]):
            owed = state.amount_to_call()
            state = state.apply(action)
            if action.type is ActionType.FOLD:
                text = "fold"
            elif action.type is ActionType.CALL:
                text = f"call {owed}" if owed else "check"
            else:
                text = f"raise to {state.spent[position]}"
            words.append((position, text, sum(state.spent)))
        rounds.append(words)
    return rounds


@dataclass
class _Decision:
    number: int
    view: MatchState
    answer: trio.Event
    action: Action = CALL


class _Watcher(Strategy):
    """Passes every view to the seat (the client calls it for each message)."""

    name = "human"

    def __init__(self, seat: HumanSeat) -> None:
        self._seat = seat

    def observe(self, view: MatchState) -> None:
        self._seat.observe(view)

    def act(self, view: MatchState) -> Action:  # pragma: no cover - the seat always passes decide
        raise AssertionError("a human seat decides through HumanSeat.decide")


class HumanSeat:
    """One person's seat: what they see (:meth:`snapshot`) and what they may do
    (:meth:`act`, :meth:`next_hand`). ``names`` are the dealer's seat names in
    seat order and ``seat`` is the person's (0-based). ``leaving`` is what the
    table says once the person left it (the hosted arena adds what it costs);
    ``links`` (set by a frontend once the match's end is recorded) what the
    end screen offers: ``match`` (the match page's address) and ``again``
    (the form fields that open another table like this one)."""

    def __init__(
        self, game: Game, names: tuple[str, ...], seat: int, *, hands: int, limits: Limits, title: str, leaving: str = LEFT
    ) -> None:
        self.game = game
        self.names = names
        self.seat = seat
        self.hands = hands
        self.limits = limits
        self.title = title
        self.leaving = leaving
        self.links: dict[str, Any] | None = None
        self.unit = unit_of(game)
        self.version = 0
        self.over = trio.Event()
        self.message: str | None = None  # why the match ended, if not normally
        self.left = False  # the person left the table
        # the connection to the dealer: cancelled once the match is over (an
        # abort the dealer reported, the person leaving), so that a decision
        # waiting on the person ends with it rather than at the dealer's clock
        self._connection = trio.CancelScope()
        self._changed = trio.Event()
        self._view: MatchState | None = None
        self._finished: MatchState | None = None  # the last finished hand, until seen
        self._decision: _Decision | None = None
        self._decisions = 0
        self._values: list[float] = []
        self._history: list[dict[str, Any]] = []
        self.round_names = round_names(game)
        # each seat's clock as this seat sees it: seconds used this hand and
        # this match, and whose turn began when (by the dealer's seat numbers)
        self._used_hand_s = [0.0] * game.num_players
        self._used_match_s = [0.0] * game.num_players
        self._turn: tuple[int, float] | None = None
        self._turn_key: tuple[int, int] | None = None  # (hand, actions taken) of the view that began it
        self._hand_id: int | None = None

    # -- the connection ------------------------------------------------------

    async def run(self, host: str, port: int, key: str | None = None) -> None:
        """Play the seat until the dealer closes it (or it fails: the reason is
        kept in :attr:`message`), or until :meth:`end` closes it; :attr:`over`
        is set either way. ``key``: the seat's, sent before the version line."""
        try:
            with self._connection:
                await play(host, port, self.game, _Watcher(self), decide=self.decide, key=key)
        except (AgentError, OSError) as error:
            self.message = f"the connection to the dealer ended: {error}"
        finally:
            self._decision = None
            self.over.set()
            self._notify()

    def end(self, message: str | None) -> None:
        """The match is over (``message``: why, if it did not end normally): no
        decision stays open, and the connection closes (the dealer that
        aborted has closed its end already)."""
        if message and not self.message:
            self.message = message
        self._decision = None
        self._connection.cancel()
        self.over.set()
        self._notify()

    def leave(self) -> None:
        """The person leaves: the seat's connection closes, so the dealer
        aborts naming this seat (its abort rule), and the table says
        :attr:`leaving`.

        Raises:
            MessageError: the match is over already.
        """
        if self.over.is_set():
            raise MessageError("the match is over already")
        self.left = True
        self.end(self.leaving)

    def observe(self, view: MatchState) -> None:
        """Every view the dealer sends this seat."""
        state = view.state
        key = (view.hand_id, sum(len(actions) for actions in state.actions))
        if key != self._turn_key:  # someone acted or a hand began: the last turn is over
            now = trio.current_time()
            if self._turn is not None:
                seat, started = self._turn
                self._used_hand_s[seat] += now - started
                self._used_match_s[seat] += now - started
            if view.hand_id != self._hand_id:
                self._hand_id = view.hand_id
                self._used_hand_s = [0.0] * self.game.num_players
            self._turn_key = key
            self._turn = None if state.finished else (self.seat_of(view, state.current_player()), now)
        self._view = view
        if view.state.finished:
            self._finished = view
            entry = self._hand_summary(view)
            self._values.append(entry["value"])
            self._history.append(entry)
            del self._history[:-HISTORY_HANDS]
        self._notify()

    async def decide(self, view: MatchState) -> Action:
        """The ``decide`` hook: open a decision and wait for the person."""
        self._decisions += 1
        decision = _Decision(self._decisions, view, trio.Event())
        self._decision = decision
        self._notify()
        await decision.answer.wait()
        return decision.action

    # -- what frontends do ------------------------------------------------------

    def act(self, decision: int, kind: ActionType, size: int | None = None) -> Action:
        """Answer the open decision ``decision``; returns the action sent.
        ``size`` (chips to raise to) is for a no-limit raise only: a size
        anywhere else is refused rather than ignored, so a frontend that
        meant something else hears of it.

        Raises:
            MessageError: no decision is open, ``decision`` is another one, a
                size where none belongs or none where one does, or the action
                is not legal (the text says why).
        """
        open_ = self._decision
        if open_ is None or self.over.is_set():
            raise MessageError("it is not your turn")
        if decision != open_.number:
            raise MessageError("that decision is over; the table has moved on")
        state = open_.view.state
        sized = kind is ActionType.RAISE and not self.game.is_limit
        if sized and not size:
            raise MessageError("a no-limit raise needs a size (chips to raise to)")
        if not sized and size is not None:
            where = "in a limit game" if kind is ActionType.RAISE else f"to {kind.name.lower()}"
            raise MessageError(f"size is only for a no-limit raise, not {where}")
        action = Action(kind, size or 0)
        try:
            state.verify(action)
        except IllegalActionError as error:
            raise MessageError(str(error)) from None
        open_.action = action
        self._decision = None
        self._finished = None  # acting means the person is on the new hand
        open_.answer.set()
        self._notify()
        return action

    def next_hand(self) -> None:
        """The person has seen the finished hand.

        Raises:
            MessageError: no finished hand is waiting (the text says why).
        """
        if self.over.is_set():
            raise MessageError("the match is over: there is no next hand")
        if self._finished is None:
            raise MessageError("there is no finished hand to move on from")
        self._finished = None
        self._notify()

    async def wait_change(self, version: int) -> int:
        """Wait until the table differs from ``version``; returns the new version."""
        while self.version == version:
            await self._changed.wait()
        return self.version

    def _notify(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    # -- what frontends show ----------------------------------------------------

    @property
    def decision(self) -> int | None:
        """The number of the open decision, if any."""
        return None if self._decision is None else self._decision.number

    @property
    def decision_state(self) -> State | None:
        """The betting state of the open decision, if any."""
        return None if self._decision is None else self._decision.view.state

    @property
    def shown(self) -> MatchState | None:
        """The hand on the table: the finished one until the person has seen it,
        else the latest."""
        return self._finished or self._view

    def snapshot(self) -> dict[str, Any]:
        """The whole table as plain JSON data (see ``static/table.js``)."""
        view = self.shown
        decision = self._decision if self._finished is None or self._finished is self._view else None
        return {
            "type": "table",
            "version": self.version,
            "title": self.title,
            "game": {
                "players": self.game.num_players,
                "limit": self.game.is_limit,
                "hole_cards": self.game.num_hole_cards,
                "rounds": self.game.num_rounds,
                "round_names": list(self.round_names),
                "board_cards": list(self.game.num_board_cards),
                # the unit a table may count in: None where every seat antes the same
                "big_blind": big_blind(self.game),
                # stacks reset to this every hand (the ACPC rule); None in limit games
                "stack": None if self.game.is_limit else self.game.stack[self.seat],
            },
            "hands": self.hands,
            "over": self.over.is_set(),
            "message": self.message,
            "left": self.left,
            "links": self.links,
            "hand": None if view is None else self._hand_table(view),
            "waiting_next": self._finished is not None and not self.over.is_set(),
            "legal": None if decision is None else self._legal(decision),
            # the open decision's clock, also while the finished hand is still
            # shown: the dealer deals the next hand at once and its clock runs
            "clock_ms": self.clock_ms(),
            "result": self.result(),
            "graph": self.graph(),
            "history": self._history[::-1],
        }

    def clock_ms(self) -> int | None:
        """Milliseconds left for the open decision under the dealer's tightest
        limit (this response, this hand, the whole match), or None."""
        return None if self._decision is None else self.seat_clock_ms(self.seat)

    def seat_clock_ms(self, seat: int) -> int:
        """Milliseconds ``seat`` has under the dealer's tightest limit: what is
        left of its turn if it is to act, else what its next turn may take."""
        elapsed = 0.0
        if self._turn is not None and self._turn[0] == seat:
            elapsed = trio.current_time() - self._turn[1]
        left = min(
            self.limits.response_ms / 1000,
            self.limits.hand_ms / 1000 - self._used_hand_s[seat],
            self.limits.match_ms / 1000 - self._used_match_s[seat],
        )
        return max(0, int((left - elapsed) * 1000))

    def result(self) -> dict[str, Any]:
        """Hands finished, total chips and the mean per hand with its 95% interval
        in the game's unit, both None until the interval is shown
        (:func:`poker.stats.interval_shown`, the rule of every page and table),
        and meanwhile ``interval_note``, the words frontends show instead."""
        values = self._values
        shown = interval_shown(len(values))
        estimate = mean_ci(values).scaled(self.unit.per_chip) if shown else None
        return {
            "hands": len(values),
            "total": sum(values),
            "unit": self.unit.name,
            "mean": None if estimate is None else estimate.mean,
            "ci95": None if estimate is None else estimate.half_width,
            "interval_note": None if shown else interval_note(self.hands),
        }

    def graph(self) -> list[tuple[int, float]]:
        """The session graph: (hands played, running total in chips) after each
        finished hand, at most :data:`GRAPH_POINTS` of them, evenly spaced, the
        last hand always included."""
        totals = list(itertools.accumulate(self._values))
        count = len(totals)
        picks: Iterable[int] = range(count)
        if count > GRAPH_POINTS:
            picks = sorted({round(i * (count - 1) / (GRAPH_POINTS - 1)) for i in range(GRAPH_POINTS)})
        return [(i + 1, totals[i]) for i in picks]

    def seat_of(self, view: MatchState, position: int) -> int:
        """The seat at ``position`` in the hand of ``view`` (the dealer moves the button)."""
        return (self.seat - view.viewer + position) % self.game.num_players

    def _hand_table(self, view: MatchState) -> dict[str, Any]:
        state, game = view.state, self.game
        n = game.num_players
        values = hand_values(state, view.hole, view.board) if state.finished else None
        to_act = -1 if state.finished else state.current_player()
        positions = sorted(range(n), key=lambda p: self.seat_of(view, p))
        board = view.board[: game.total_board_cards(state.round)]
        # The button sits just before the first to act in the last round (ACPC
        # games order every round after the first from the button's left).
        button = (game.first_player[-1] - 1) % n
        shown = [state.is_showdown() and not state.folded[p] and bool(view.hole[p]) for p in range(n)]
        live = view is self._view  # a finished hand kept on screen has no clocks: the next one's run
        players = [
            {
                "name": self.names[self.seat_of(view, p)],
                "position": p,
                "button": p == button,
                "you": p == view.viewer,
                "cards": [card_to_text(c) for c in view.hole[p]],
                "best": hand_name((*view.hole[p], *board)) if shown[p] else None,
                "blind": game.blind[p],
                "spent": state.spent[p],
                "stack": None if game.is_limit else game.stack[p] - state.spent[p],
                "folded": state.folded[p],
                "all_in": not state.folded[p] and state.is_all_in(p) and not game.is_limit,
                "to_act": p == to_act,
                "value": None if values is None else float(values[p]),
                "clock_ms": self.seat_clock_ms(self.seat_of(view, p)) if live else None,
            }
            for p in positions
        ]
        return {
            "id": view.hand_id,
            "number": view.hand_id + 1,
            "finished": state.finished,
            "showdown": state.is_showdown(),
            "board": [card_to_text(c) for c in board],
            "pot": sum(state.spent),
            "round": state.round,
            "players": players,
            "streets": self._streets(view, positions),
        }

    def _streets(self, view: MatchState, positions: list[int]) -> list[dict[str, Any]]:
        """Each round so far (:func:`agent.human.streets.streets`): its name, its
        actions (``player`` indexes the hand's ``players``; ``text`` in chips;
        ``front`` and ``pot`` the table after it) and each player's chips in
        front at its end, in ``players`` order."""
        index = {position: i for i, position in enumerate(positions)}
        result = []
        for round_, street in enumerate(streets(view.state)):
            actions = []
            for step in street.steps:
                name = self.names[self.seat_of(view, step.position)]
                actions.append({"player": index[step.position], "name": name, "action": step.action, "verb": verb(name, step),
                                "amount": step.amount, "all_in": step.all_in, "text": describe(name, step),
                                "front": [step.front[p] for p in positions], "pot": step.pot})
            result.append({
                "name": self.round_names[round_],
                "actions": actions,
                "front": [street.front[p] for p in positions],
                "start": [street.start[p] for p in positions],  # a replay's first picture of the street
                "start_pot": street.start_pot,
            })
        return result

    def _legal(self, decision: _Decision) -> dict[str, Any]:
        state = decision.view.state
        owed = state.amount_to_call()
        bounds = state.raise_bounds()
        raise_: dict[str, Any] | None = None
        if bounds is not None:
            # hand totals, as the dealer wants them; a table shows them less
            # ``base``, the street's chips (agent.human.streets)
            low, high = bounds
            base = street_base(state)
            raise_ = {
                "min": low,
                "max": high,
                "base": base,
                "verb": "raise" if state.max_spent > base else "bet",
                "presets": [] if self.game.is_limit else [[label, size] for label, size in raise_presets(state)],
                "step": big_blind(self.game) or 1,  # the slider moves a big blind at a time
            }
        return {
            "decision": decision.number,
            "fold": state.can_fold(),
            "call": owed,
            "raise": raise_,
        }

    def _hand_summary(self, view: MatchState) -> dict[str, Any]:
        state = view.state
        values = hand_values(state, view.hole, view.board)
        shown = [
            {"name": self.names[self.seat_of(view, p)], "cards": [card_to_text(c) for c in view.hole[p]]}
            for p in range(self.game.num_players)
            if p != view.viewer and view.hole[p]
        ]
        return {
            "hand": view.hand_id + 1,
            "cards": [card_to_text(c) for c in view.hole[view.viewer]],
            "board": [card_to_text(c) for c in view.board[: self.game.total_board_cards(state.round)]],
            "betting": state.betting_string(),
            "streets": [  # the readable history: who did what, street by street
                {"name": street["name"], "actions": [{k: a[k] for k in _TOLD} for a in street["actions"]]}
                for street in self._streets(view, list(range(self.game.num_players)))
            ],
            "folded": state.folded[view.viewer],
            "shown": shown,
            "value": float(values[view.viewer]),
        }
