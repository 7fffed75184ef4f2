"""The :class:`Strategy` interface and the registry that builds strategies by name.

A strategy decides for one seat. The agent client (``agent.client``) calls, for
every match state the dealer sends:

1. :meth:`Strategy.new_hand` when the hand id changes;
2. :meth:`Strategy.observe` with the view (every message, the final one of a
   hand included, which shows the showdown cards);
3. :meth:`Strategy.act` when, and only when, the viewer is to act;

and :meth:`Strategy.close` once the dealer closes the connection. Views are
:class:`poker.protocol.MatchState`; legality comes from ``view.state``
(``can_fold``, ``raise_bounds``, ``legal_actions``), never from a strategy's own
rules.

Solvers and evaluators also want the whole policy of a public state at once,
vectorised over the private hands: :meth:`Strategy.policy` returns an array
``float64[n_private_hands, n_actions]`` whose rows follow :func:`poker.deal.private_hands`
and whose columns follow :attr:`PublicState.actions`.

Strategies are named by a spec ``"name:opt=val,opt2=val"``;
:func:`make_strategy` parses it and :func:`register` adds a factory::

    @register("always-call", "call or check every time")
    def _always_call(game: Game, options: Options, *, seed: int | None) -> Strategy:
        return AlwaysCall(game)

A module registers its strategies when it is imported; the package
(``strategies/__init__.py``) imports the built-in ones, so they are registered
before anything in ``strategies`` is used. This module imports none of them.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game
from poker.names import did_you_mean
from poker.protocol import MatchState
from poker.state import Action, State

__all__ = [
    "Strategy",
    "PublicState",
    "StrategyError",
    "Options",
    "Factory",
    "register",
    "Spec",
    "make_strategy",
    "on_columns",
    "strategy_names",
]


class StrategyError(ValueError):
    """A strategy spec that cannot be built: unknown name, option or value."""


@dataclass(frozen=True)
class PublicState:
    """What every player sees: the betting (``state``) and the board cards dealt
    so far. ``actions`` are the columns of a :meth:`Strategy.policy` answer; they
    default to ``state.legal_actions()`` (for no-limit: minimum raise and all-in)."""

    state: State
    board: tuple[int, ...] = ()
    actions: tuple[Action, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.actions:
            object.__setattr__(self, "actions", tuple(self.state.legal_actions()))
        illegal = [str(a) for a in self.actions if not self.state.is_legal(a)]
        if illegal:
            raise StrategyError(f"actions {illegal} are not legal after {self.state.betting_string()!r}")


def on_columns(
    name: str, public: PublicState, actions: Sequence[Action], rows: npt.NDArray[np.float64], hint: str = ""
) -> npt.NDArray[np.float64]:
    """A policy ``rows`` over the strategy's own ``actions`` (``[H, n]``; an action
    may come twice) on the columns of ``public.actions``.

    Raises:
        NotImplementedError: the strategy ``name`` plays an action with positive
            probability that is not a column (``hint`` ends the message).
    """
    columns = {a: i for i, a in enumerate(public.actions)}
    out = np.zeros((len(rows), len(public.actions)))
    for i, action in enumerate(actions):
        column = columns.get(action)
        if column is None:
            if rows[:, i].any():
                raise NotImplementedError(
                    f"strategy {name!r} plays {action} after {public.state.betting_string()!r}"
                    f" but the columns are {[str(a) for a in public.actions]}{hint}"
                )
            continue
        out[:, column] += rows[:, i]
    return out


class Strategy(abc.ABC):
    """How one seat plays. Subclasses implement :meth:`act`; the other hooks are optional."""

    #: The registry name (set by :func:`make_strategy`), used in messages.
    name: str = "strategy"

    def new_hand(self, view: MatchState) -> None:
        """A new hand starts; ``view`` is its first state (only the viewer's cards)."""

    def observe(self, view: MatchState) -> None:
        """Every state the dealer sends, before :meth:`act` when it is our turn."""

    @abc.abstractmethod
    def act(self, view: MatchState) -> Action:
        """The action to take in ``view``; called only when ``view.is_my_turn()``.
        It must be legal in ``view.state``."""

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """Action probabilities for every private hand of the player to act:
        ``float64[len(private_hands(game)), len(public.actions)]``, rows summing
        to 1 (rows of hands that clash with the board are unspecified).

        Raises:
            NotImplementedError: the strategy cannot state its policy this way.
        """
        raise NotImplementedError(
            f"strategy {self.name!r} does not give action probabilities per private hand"
            " (Strategy.policy); only strategies with an explicit policy, such as solved ones, do"
        )

    def close(self) -> None:
        """The match is over (the dealer closed the connection); release resources."""


class Options:
    """The ``opt=val`` part of a strategy spec. A factory reads each option with a
    typed getter; :func:`make_strategy` then rejects any option nobody read."""

    def __init__(self, strategy: str, values: Mapping[str, str]) -> None:
        self._strategy = strategy
        self._values = dict(values)
        self._known: dict[str, str] = {}

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        """A value from ``choices`` (``default`` when absent)."""
        self._known[key] = "|".join(choices)
        value = self._values.get(key, default)
        if value not in choices:
            raise StrategyError(
                f"strategy {self._strategy!r}: option {key}={value!r} is not one of {', '.join(choices)}"
            )
        return value

    def text(self, key: str, default: str | None = None, *, meta: str = "TEXT") -> str | None:
        """A free-form value (a path, a name), ``default`` when absent; ``meta``
        names it in messages (``file=PATH``)."""
        self._known[key] = meta
        return self._values.get(key, default)

    def check_all_read(self) -> None:
        """Raise :class:`StrategyError` naming any option no getter asked for."""
        unknown = sorted(set(self._values) - set(self._known))
        if unknown:
            takes = ", ".join(f"{k}={v}" for k, v in self._known.items()) or "no options"
            raise StrategyError(f"strategy {self._strategy!r} has no option {', '.join(unknown)}; it takes {takes}")


class Factory(Protocol):
    """Builds a strategy for ``game`` from its options; ``seed`` None = unseeded."""

    def __call__(self, game: Game, options: Options, *, seed: int | None) -> Strategy: ...


@dataclass(frozen=True)
class _Entry:
    factory: Factory
    help: str


_REGISTRY: dict[str, _Entry] = {}


def register(name: str, help: str) -> Callable[[Factory], Factory]:
    """Decorator: make ``factory`` available as ``name`` to :func:`make_strategy`."""

    def add(factory: Factory) -> Factory:
        if name in _REGISTRY:
            raise ValueError(f"strategy name {name!r} is registered twice")
        _REGISTRY[name] = _Entry(factory, help)
        return factory

    return add


def strategy_names() -> dict[str, str]:
    """Every registered strategy name with its one-line help."""
    return {name: entry.help for name, entry in sorted(_REGISTRY.items())}


@dataclass(frozen=True)
class Spec:
    """A strategy spec (``"random:size=pot,x=1"``) parsed once, where it enters
    (the command line, a plan, a config), and passed on as this value to the
    seat names, the plan and the seat: nobody splits the text again. ``text``
    is the spec as written (what plan files, logs and ``--strategy`` carry)."""

    text: str
    name: str
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Spec:
        """``"random:size=pot,x=1"`` -> ``Spec(text, "random", (("size", "pot"), ("x", "1")))``.

        Raises:
            StrategyError: an option not of the form ``name=value``, or one given twice.
        """
        name, _, rest = text.partition(":")
        options: dict[str, str] = {}
        for item in filter(None, rest.split(",")):
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise StrategyError(f"strategy spec {text!r}: option {item!r} is not of the form name=value")
            if key in options:
                raise StrategyError(f"strategy spec {text!r} gives option {key!r} twice")
            options[key] = value
        return cls(text, name, tuple(options.items()))

    def __str__(self) -> str:
        return self.text

    def has_option(self, key: str) -> bool:
        return any(k == key for k, _ in self.options)

    def with_option(self, key: str, value: str) -> Spec:
        """This spec with one more option (``key`` must not be among its options).

        Raises:
            StrategyError: ``value`` holds a ``,`` (it would split into two options).
        """
        if "," in value:
            raise StrategyError(f"strategy spec {self.text!r}: option value {value!r} holds a ','")
        text = f"{self.text}{',' if ':' in self.text else ':'}{key}={value}"
        return Spec(text, self.name, (*self.options, (key, value)))


def make_strategy(spec: str | Spec, game: Game, *, seed: int | None = None) -> Strategy:
    """Build the strategy named by ``spec`` (:class:`Spec`, or its text ``"name"``
    or ``"name:opt=val,…"``) for ``game``. ``seed`` makes randomised strategies
    reproducible.

    Raises:
        StrategyError: unknown name or option, or a bad option value.
    """
    parsed = spec if isinstance(spec, Spec) else Spec.parse(spec)
    name, values = parsed.name, dict(parsed.options)
    entry = _REGISTRY.get(name)
    if entry is None:
        known = sorted(_REGISTRY)
        raise StrategyError(f"unknown strategy {name!r}; {did_you_mean(name, known)}known strategies: {', '.join(known)}")
    options = Options(name, values)
    strategy = entry.factory(game, options, seed=seed)
    options.check_all_read()
    strategy.name = name
    return strategy
