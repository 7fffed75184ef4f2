"""The portfolio agent: Polaris 2008's switching between component strategies by
online imaginary observations (Johanson 2016 thesis 'Robust Strategies and
Counter-Strategies', ch7–8).

Spec: ``portfolio`` (the game's default set, :data:`DEFAULT_SETS`) or
``portfolio:bots=A+B+C`` with component specs joined by ``+``; a component's own
options are separated by ``;`` instead of ``,`` (the spec's option separator):
``portfolio:bots=leduc-cfr+tilt:win=7;opp-fold=7``. Other options:
``explore=C`` (the bound's width, default :data:`DEFAULT_EXPLORE`), ``warmup=N``
(hands each component plays in turn before the rule takes over, default 1),
``estimator=NAME`` (one of :data:`strategies.imaginary.ESTIMATORS`, default
``all-cards+early-folds``), ``log=PATH`` (append ``hand_id,component`` per hand).

**Learning.** Every finished hand (the final MATCHSTATE that
:meth:`~strategies.base.Strategy.observe` receives: the opponent's cards only at
a showdown) updates the estimated value of *every* component against this
opponent with imaginary observations (:mod:`strategies.imaginary`): off-policy
(the hand was played by the chosen component σ̂, each component σ is evaluated),
**partial information** (the thesis' §7.3.1 adaptation, biased, which is what a
seated player can compute). The weights come only from the components'
``policy()``; no hidden card is ever used. The default estimator is All Cards +
Early Folds, the lowest-variance one (the one the module docstring of
:mod:`strategies.imaginary` names for choosing among strategies); its bias under
partial information is the price of the variance cut (thesis Tables 7.3/7.4).
A hand that the estimator cannot weight (a no-limit raise size no component's
policy has as a column, a policy that is not given per hand) updates nobody and
is counted in :attr:`PortfolioStrategy.skipped`.

**Choosing** (before each hand): a UCB rule on each component's running mean
``m_k`` and sample variance ``s_k²`` of its per-hand estimates, UCB1-Tuned's
variance-aware bound with the count of every component equal to the number of
hands ``t`` seen, since one hand's imaginary observations update them all::

    score_k = m_k + explore · sqrt(s_k² · ln t / t)

and the highest score plays (ties: the first listed). Why UCB and not Exp3: the
feedback is *full* (every component is estimated after every hand), not a
bandit's single arm, so Exp3's forced exploration (a fixed share of hands on
every component, the bad ones included, forever) buys no information that the
estimates do not already give; and the opponents it is meant for (bots, people
within a match) are closer to stationary than adversarial. The variance term is
still useful: off-policy estimates of components far from what was played are
the noisiest, their optimism brings them into play, and on-policy hands are what
makes their estimates precise. Kept narrow (:data:`DEFAULT_EXPLORE`), the bound is close
to Polaris' own rule, the highest estimate (thesis ch7-8). The rule is deterministic
given the observations; the seed fixes the components' own draws (component ``k`` gets a
seed derived from the portfolio's and ``k``), so the same seed and the same opponent
play (and choose) the same way.

**Which component played.** :attr:`PortfolioStrategy.last_component` (the
current hand's component), :attr:`PortfolioStrategy.choices` (``(hand_id,
component index)`` of every hand) and, with ``log=PATH``, one ``hand_id,component``
line per hand appended to PATH (a duplicate match's two seatings append to the
same file, one after the other). The dealer's hand records cannot carry it: the
choice is the agent's private state and the ACPC protocol has no channel for it.
So ``arena match`` gives a portfolio ``log=<match>.<name>.components.csv`` beside
each seating's log (:func:`arena.match.agent_spec`) and
:func:`analysis.hand_files.read_components` joins it to that log's hands (and its
msgpack records): every hand record then says which component played it.

:func:`play_hands` plays hands between strategies in this process, through their
``new_hand`` / ``observe`` / ``act`` hooks exactly as the agent client calls them
(the views of :func:`poker.protocol.view_of`), for tests and benchmarks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import IO, Final

import numpy as np
import numpy.typing as npt

from poker.deal import Dealer
from poker.gamedef import Game, load_game
from poker.hand_rank import hand_values
from poker.protocol import MatchState, view_of
from poker.state import CALL, Action, State
from strategies.base import Options, PublicState, Strategy, StrategyError, make_strategy, register
from strategies.imaginary import ESTIMATORS, HandEvaluator, ImportanceError

__all__ = [
    "DEFAULT_EXPLORE",
    "DEFAULT_SETS",
    "PortfolioStrategy",
    "component_specs",
    "play_hands",
]

#: Component sets of ``portfolio`` without ``bots=``, by game short name. Leduc:
#: the equilibrium, Polaris' Orange and Peach, and two stronger tilts, one against
#: passive opponents (``opp-fold=25``: worth 0.80 chips/hand against always-call,
#: the equilibrium 0.63) and one against aggressive ones (``lose=-15``: 0.79
#: against always-raise, the equilibrium 0.33); each of the two gives up less than
#: 0.03 chips/hand to the equilibrium (exact values on the public tree).
DEFAULT_SETS: Final[dict[str, tuple[str, ...]]] = {
    "leduc": ("leduc-cfr", "tilt:preset=orange", "tilt:preset=peach", "tilt:opp-fold=25", "tilt:lose=-15"),
    "kuhn": ("kuhn-cfr", "tilt:preset=orange", "tilt:preset=peach"),
}
#: The bound's width (``explore``): 0.25 rather than UCB1's sqrt(2) because
#: the variances are those of off-policy estimates, largest for the components least
#: like the one played, and a wide bound kept playing them (Leduc vs always-raise
#: with 1.0: the portfolio 0.66 chips/hand, its best component 0.92; with 0.25: 0.75,
#: at 4000 hands per seating, ``benchmarks/portfolio.py``).
DEFAULT_EXPLORE: Final = 0.25
#: The default imaginary-observation estimator.
DEFAULT_ESTIMATOR: Final = "all-cards+early-folds"
#: Estimator caches are dropped after this many hands (they grow with the distinct hands seen).
_CACHE_HANDS: Final = 20_000


def component_specs(game: Game, bots: str | None) -> tuple[str, ...]:
    """The component specs of ``bots`` (``A+B+C``, inner options ``;``-separated),
    or the game's default set."""
    if bots is None:
        for name, specs in DEFAULT_SETS.items():
            if load_game(name) == game:
                return specs
        raise StrategyError(
            f"portfolio has no default component set for this game (defaults: {', '.join(DEFAULT_SETS)});"
            " give bots=A+B+C"
        )
    specs = tuple(part.replace(";", ",") for part in bots.split("+"))
    if len(specs) < 1 or any(not s for s in specs):
        raise StrategyError(f"portfolio: bots={bots!r} must be strategy specs joined by '+'")
    return specs


def _component_seed(seed: int | None, k: int) -> int | None:
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed & (2**63 - 1), k]).generate_state(1, np.uint32)[0])


class PortfolioStrategy(Strategy):
    """Plays one component per hand, chosen by the UCB rule of the module docstring."""

    name = "portfolio"

    def __init__(
        self,
        game: Game,
        components: Sequence[Strategy],
        labels: Sequence[str],
        *,
        explore: float = DEFAULT_EXPLORE,
        warmup: int = 1,
        estimator: str = DEFAULT_ESTIMATOR,
        log: str | None = None,
    ) -> None:
        if game.num_players != 2:
            raise StrategyError(f"portfolio: imaginary observations need a two-player game, not {game.num_players}")
        if not components or len(components) != len(labels):
            raise StrategyError("portfolio: one label per component, at least one component")
        if estimator not in ESTIMATORS:
            raise StrategyError(f"portfolio: estimator {estimator!r} is not one of {', '.join(ESTIMATORS)}")
        if not (math.isfinite(explore) and explore >= 0) or warmup < 0:
            raise StrategyError(f"portfolio: explore={explore} must be >= 0 and warmup={warmup} >= 0")
        self.game = game
        self.components = tuple(components)
        self.labels = tuple(labels)
        self.explore = explore
        self.warmup = warmup
        self.column = ESTIMATORS.index(estimator)
        self.log_path = log
        self._log: IO[str] | None = None
        k = len(components)
        #: Running count, mean and sum of squared deviations (Welford) per component.
        self.count = 0
        self.mean = np.zeros(k)
        self._m2 = np.zeros(k)
        #: Hands the estimator could not weight.
        self.skipped = 0
        #: ``(hand_id, component index)`` of every hand played.
        self.choices: list[tuple[int, int]] = []
        self.current = 0
        self._hand: int | None = None
        self._updated: int | None = None
        self._evaluators: dict[tuple[int, int], HandEvaluator] = {}

    # -- which component ---------------------------------------------------------------

    @property
    def last_component(self) -> str:
        """The spec of the component playing (or that played) the current hand."""
        return self.labels[self.current]

    def variance(self) -> npt.NDArray[np.float64]:
        """Sample variance of each component's per-hand estimates (0 before two hands)."""
        if self.count < 2:
            return np.zeros(len(self.components))
        out: npt.NDArray[np.float64] = self._m2 / (self.count - 1)
        return out

    def scores(self) -> npt.NDArray[np.float64]:
        """The UCB score of each component (see the module docstring)."""
        t = self.count
        if t < 2:
            return self.mean.copy()
        bonus = self.explore * np.sqrt(self.variance() * math.log(t) / t)
        out: npt.NDArray[np.float64] = self.mean + bonus
        return out

    def choose(self) -> int:
        """The component for the next hand: in turn for the warm-up, then the best score."""
        hands = len(self.choices)
        if hands < self.warmup * len(self.components) or self.count < 2:
            return hands % len(self.components)
        return int(np.argmax(self.scores()))

    # -- the hooks ---------------------------------------------------------------------

    def new_hand(self, view: MatchState) -> None:
        self._hand = view.hand_id
        self.current = self.choose()
        self.choices.append((view.hand_id, self.current))
        if self.log_path is not None:
            if self._log is None:
                self._log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
            self._log.write(f"{view.hand_id},{self.labels[self.current]}\n")
            self._log.flush()
        for component in self.components:
            component.new_hand(view)

    def observe(self, view: MatchState) -> None:
        for component in self.components:
            component.observe(view)
        if view.state.finished and self._updated != view.hand_id and self._hand == view.hand_id:
            self._updated = view.hand_id
            self._learn(view)

    def act(self, view: MatchState) -> Action:
        action = self.components[self.current].act(view)
        return action if view.state.is_legal(action) else CALL

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """The current component's policy."""
        return self.components[self.current].policy(public)

    def close(self) -> None:
        for component in self.components:
            component.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- learning ------------------------------------------------------------------------

    def _evaluator(self, sigma: int, played: int) -> HandEvaluator:
        found = self._evaluators.get((sigma, played))
        if found is None:
            components = self.components
            found = HandEvaluator(self.game, components[sigma], components[played], "partial")
            self._evaluators[(sigma, played)] = found
        return found

    def estimates(self, view: MatchState) -> npt.NDArray[np.float64] | None:
        """Every component's estimate from the finished hand ``view`` (what our
        position sees), played by the current component; ``None`` where the
        estimator cannot weight it."""
        state = view.state
        me = view.viewer
        value = float(_values(state, view.hole, view.board)[me])
        out = np.empty(len(self.components))
        try:
            for k in range(len(self.components)):
                evaluator = self._evaluator(k, self.current)
                out[k] = evaluator.hand(
                    f"hand {view.hand_id}", me, state.betting_string(), view.hole, view.board, value
                )[self.column]
        except (ImportanceError, NotImplementedError, StrategyError):
            return None
        return out

    def _learn(self, view: MatchState) -> None:
        if self.count and self.count % _CACHE_HANDS == 0:
            self._evaluators.clear()
        x = self.estimates(view)
        if x is None or not np.isfinite(x).all():
            self.skipped += 1
            return
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (x - self.mean)


def _values(state: State, hole: Sequence[Sequence[int]], board: Sequence[int]) -> tuple[float, ...]:
    """Chips per position of a finished hand (the showdown's cards are in ``hole``)."""
    return tuple(float(v) for v in hand_values(state, hole, board))


def play_hands(
    game: Game, players: Sequence[Strategy], num_hands: int, *, seed: int, rotate: bool = True
) -> npt.NDArray[np.float64]:
    """Play ``num_hands`` hands between ``players`` in this process through their
    hooks (``new_hand``, ``observe`` of every view, ``act`` on their turn), with
    the dealer's views: a player sees others' cards only at a showdown. Player
    ``k`` sits at position ``(k + hand) % P`` (``rotate``, as a match seats) or
    ``k``; cards come from ``Dealer(game, seed=seed)`` (same seed, same cards
    per position: swapping the players gives the duplicate match). Returns the
    chips of each player per hand, ``float64[num_hands, P]``.

    Raises:
        StrategyError: a player chose an illegal action.
    """
    count = game.num_players
    dealer = Dealer(game, seed=seed)
    out = np.empty((num_hands, count))
    for h in range(num_hands):
        deal = dealer.next_hand()
        seat_of = [(p - h) % count if rotate else p for p in range(count)]  # position -> player
        state = State(game)
        for p in range(count):
            players[seat_of[p]].new_hand(view_of(state, deal, hand_id=h, viewer=p))
        while True:
            for p in range(count):
                players[seat_of[p]].observe(view_of(state, deal, hand_id=h, viewer=p))
            if state.finished:
                break
            mover = state.current_player()
            action = players[seat_of[mover]].act(view_of(state, deal, hand_id=h, viewer=mover))
            if not state.is_legal(action):
                who = players[seat_of[mover]].name
                raise StrategyError(f"{who} chose the illegal {action} at {state.betting_string()!r}")
            state = state.apply(action)
        values = _values(state, deal.hole, deal.board[: game.total_board_cards(state.round)])
        for p in range(count):
            out[h, seat_of[p]] = values[p]
    return out


@register("portfolio", "switch between component strategies by imaginary observations (bots=A+B+C)")
def _portfolio(game: Game, options: Options, *, seed: int | None) -> Strategy:
    bots = options.text("bots", meta="A+B+C")
    explore_text = options.text("explore", str(DEFAULT_EXPLORE), meta="FLOAT")
    warmup_text = options.text("warmup", "1", meta="N")
    estimator = options.text("estimator", DEFAULT_ESTIMATOR, meta="ESTIMATOR")
    log = options.text("log", meta="PATH")
    try:
        explore = float(explore_text or "")
        warmup = int(warmup_text or "")
    except ValueError:
        raise StrategyError(
            f"portfolio: explore={explore_text!r} must be a number, warmup={warmup_text!r} an integer"
        ) from None
    specs = component_specs(game, bots)
    if any(spec.partition(":")[0] == "portfolio" for spec in specs):
        raise StrategyError("portfolio: a component cannot be a portfolio")
    components = [make_strategy(spec, game, seed=_component_seed(seed, k)) for k, spec in enumerate(specs)]
    labels = [spec.replace(",", ";") for spec in specs]
    return PortfolioStrategy(
        game, components, labels, explore=explore, warmup=warmup, estimator=estimator or DEFAULT_ESTIMATOR, log=log
    )
