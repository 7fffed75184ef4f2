"""Local best response against the HUNL bot (``hunl-modicum``: continual
re-solving with Modicum's continuation leaves on the shipped blueprint) in
heads-up no-limit hold'em, with AIVAT, beside DeepStack's figure; and the bot
head to head in duplicate against the continual re-solver with the equity
heuristic (Lisý & Bowling, 'Equilibrium Approximation Quality of Current
No-Limit Poker Bots' (2017); Moravčík et al., 'DeepStack' (2017); Brown,
Sandholm & Amos, 'Depth-Limited Solving for Imperfect-Information Games' (2018)).

Lines, each with five unbiased estimators (:data:`ESTIMATORS`: raw money, all-in
adjusted, imaginary observations, AIVAT with chance corrections only, full AIVAT),
mbb/g with 95 % intervals:

1. head to head, duplicate (both seatings of every deal), the bot against
   ``resolve:evaluator=equity``, on the bot's hands (both policies are known, so
   full AIVAT corrects the re-solver's decisions too);
2. LBR (fcpa: fold, call, pot, all-in; acting on every street) against the bot,
   duplicate pairs; the estimators run on the bot's side (its policy is known for
   every private hand: the re-solve at the public state) and LBR's result is
   their negation; LBR's own decisions depend only on its cards and the public
   line, so they need no correction and the bot's range can be averaged over.
   AIVAT's value function here (:class:`analysis.aivat.EquityValues`) assumes
   every hand is checked down from where it stands, so at the bot's decisions it
   prices a bet nobody has answered yet badly (against LBR's all-ins, each at
   stack size): its corrections there can add more variance than they remove;
   then the all-in adjusted result split by the size of what each hand won or
   lost (:data:`POT_CLASSES`): the small pots, LBR's bets at a bot that folds too
   often, are measured to ±10-170 mbb/g over 1000 pairs where the total's noise
   (the stacks) is ±900, so they show a change the total cannot; and by line
   (:func:`_by_line`: LBR's blind, the pre-flop betting, where the hand ended),
   the few lines that moved the total most;
3. last: ``HUNL LBR fcpa every street vs hunl-modicum: X ± H mbb/g (95%, ESTIMATOR) vs DeepStack
   -383 ± 219`` (LBR could not beat DeepStack) ``ratio r``, with ``r = (750 -
   X) / (750 + 383)``: how far below 750 mbb/g (what LBR wins from a bot that
   always folds) LBR's result stays, relative to DeepStack's; r > 1: ours better.
   X is the all-in adjusted estimate (the line says so): it needs nothing but
   the rules, while the three that average over the bot's range rely on its
   stated policy matching its play exactly and on the bookkeeping of its
   range (an all-in's run-out once kept holdings of the board's own cards:
   docs/results.md); the figure rests on the estimator with the fewest
   assumptions. All five are printed on line 2.

The default run, ``--hands 1000 --h2h-hands 200``, took 40 minutes on this
2-core machine while another benchmark shared it (671 s the head to head,
1715 s LBR at 0.9 s a hand; AIVAT's policy queries re-solve again, included),
within the 45 the issue allows (28 minutes with ``--bot modicum`` on a quieter
machine); ``--hands 4 --h2h-hands 2`` shows it works in a minute. ``--bot
resolve:evaluator=equity`` measures continual re-solving with equity leaves
the same way (0.3 s an LBR hand). A ``--bot``/``--anchor`` that is not a
strategy is one line before any worker starts.

Usage: ``.venv/bin/python benchmarks/hunl_lbr.py [--hands 1000] [--h2h-hands 200] [--anchor SPEC] [--workers 2] [--seed 1] [--save FILE.npz]``
(``--hands 0 --anchor hunl-ehs2-3``: only the head to head against another bot;
``--pool A.npz B.npz ...``: lines 2 and 3 over the pairs of earlier ``--save`` runs, e.g. of
seeds 1-3, playing nothing; a ``--save`` file names its bot and seed, so pooling two bots or
one seed twice is refused. ``benchmarks/data/hunl_lbr/`` keeps the runs behind the README's
figure, half an hour a seed on 2 cores, so later seeds pool with them).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

import numpy as np  # noqa: E402

from analysis.aivat import EquityValues, aivat  # noqa: E402
from analysis.allin import allin_values  # noqa: E402
from analysis.hands import NO_SEED, Hands  # noqa: E402
from analysis.importance import simulate_hands  # noqa: E402
from poker.deal import Dealer  # noqa: E402
from poker.gamedef import Game, load_game  # noqa: E402
from poker.hand_rank import hand_values  # noqa: E402
from poker.stats import mean_ci  # noqa: E402
from strategies.base import Strategy, StrategyError, make_strategy  # noqa: E402
from strategies.lbr import LbrConfig, lbr_hand  # noqa: E402

#: The bot measured by default (``--bot`` names another).
BOT = "hunl-modicum"
RESOLVER = "resolve:evaluator=equity,iterations=100,boards=16"
#: Moravčík et al. (2017), LBR against DeepStack, mbb/g and its 95 % half-width.
DEEPSTACK = (-383.0, 219.0)
#: Duplicate pairs a worker's job plays with one bot (each job builds the bot: its root solve, seconds).
LBR_CHUNK = 10
#: What LBR wins from a bot that always folds, mbb/g (Lisý & Bowling's table: 750 ± 0).
ALWAYS_FOLD = 750.0


#: The estimators, each unbiased: raw money; all-in adjusted (a hand whose players
#: are all in before the river is worth its mean over every run-out,
#: :mod:`analysis.allin`); imaginary observations (the payoff at the observed
#: terminal averaged over the bot's range given the line: the bot's policy is
#: known for every private hand, LBR's does not depend on the bot's cards); AIVAT
#: with its chance corrections only (the board deals, valued by showdown equity, an
#: all-in's run-out included: then it keeps neither the run-out's luck, as all-in
#: adjusted, nor the bot's cards', as imaginary observations);
#: full AIVAT (also the bot's decisions: the equity value function assumes a hand
#: is checked down, which prices an unanswered bet badly).
ESTIMATORS = ("raw", "all-in adjusted", "imaginary observations", "AIVAT, chance only", "AIVAT")


def _estimates(hands: Hands, bot_name: str, bot: Strategy, game: Game, opponent: Strategy | None = None) -> np.ndarray:
    """``float64[n, len(ESTIMATORS)]``: the bot's chips per hand by every estimator."""
    seat = hands.name_index[:, 0] == hands.names.index(bot_name)
    position = np.where(seat, 0, 1)
    rows = np.arange(len(hands))
    terms = aivat(hands, bot_name, bot, EquityValues(game), opponent=opponent)
    return np.stack(
        [
            hands.values[rows, position],
            allin_values(hands).values[rows, position],
            terms.value,
            terms.value - terms.chance,
            terms.estimate,
        ],
        axis=1,
    )


def lbr_chunk(job: tuple[str, int, int, int]) -> tuple[np.ndarray, list[str]]:
    """Hands ``start..stop-1`` of ``seed``, LBR in each position: LBR's chips by
    every estimator, ``float64[pairs, 2, len(ESTIMATORS)]``, and each hand's
    betting (ACPC, LBR in position 0 then 1 for each deal), to read where LBR wins."""
    spec, seed, start, stop = job
    game = load_game("hunl")
    bot = make_strategy(spec, game, seed=seed)
    config = LbrConfig("fcpa", frozenset(range(game.num_rounds)))
    dealer = Dealer(game, seed=seed)
    for _ in range(start):
        dealer.next_hand()
    n = 2 * (stop - start)
    holes = np.empty((n, 2, game.num_hole_cards), dtype=np.int8)
    boards = np.full((n, sum(game.num_board_cards)), -1, dtype=np.int8)
    values = np.empty((n, 2))
    seating = np.empty((n, 2), dtype=np.int32)  # position -> 0 (lbr) or 1 (bot)
    bettings: list[str] = []
    for i in range(start, stop):
        deal = dealer.next_hand()
        for position in (0, 1):
            row = 2 * (i - start) + position
            state = lbr_hand(game, bot, deal, position, config, np.random.default_rng([seed, i, position]))
            shown = game.total_board_cards(state.round)
            holes[row], boards[row, :shown] = deal.hole, deal.board[:shown]
            values[row] = [float(v) for v in hand_values(state, deal.hole, deal.board)]
            seating[row] = (0, 1) if position == 0 else (1, 0)
            bettings.append(state.betting_string())
    hands = Hands(
        game=game,
        source=f"lbr(seed={seed})",
        hand_id=np.arange(n, dtype=np.int64),
        values=values,
        names=("lbr", "bot"),
        name_index=seating,
        hole=holes,
        board=boards,
        betting=tuple(bettings),
        line=np.arange(1, n + 1, dtype=np.int64),
        seed=np.full(n, NO_SEED, dtype=np.int64),
    )
    return -_estimates(hands, "bot", bot, game).reshape(-1, 2, len(ESTIMATORS)), bettings  # zero-sum: LBR's is the bot's negated


def head_to_head(job: tuple[str, str, int, int]) -> np.ndarray:
    """``hands`` deals of ``seed`` in both seatings, the bot against ``anchor`` (a
    spec whose policy is known too: AIVAT corrects its decisions): the bot's
    chips per deal by every estimator, the mean of the seatings,
    ``float64[hands, len(ESTIMATORS)]``."""
    spec, anchor, seed, hands = job
    game = load_game("hunl")
    bot, resolver = make_strategy(spec, game, seed=seed), make_strategy(anchor, game, seed=seed)
    out = np.zeros((hands, len(ESTIMATORS)))
    for players in ((bot, resolver), (resolver, bot)):
        names = ("bot", "resolver") if players[0] is bot else ("resolver", "bot")
        played = simulate_hands(game, list(players), hands, seed=seed, names=names, rotate=False)
        out += _estimates(played, "bot", bot, game, opponent=resolver) / 2
    return out


def _line(label: str, figures: np.ndarray, per_chip: float) -> str:
    """``label: E1 X ± H, E2 ...`` in mbb/g over the rows of ``figures`` (one column an estimator)."""
    parts = []
    for k, name in enumerate(ESTIMATORS):
        ci = mean_ci(figures[:, k]).scaled(per_chip)
        parts.append(f"{name} {ci.mean:+.0f} ± {ci.half_width:.0f}")
    return f"{label}: " + ", ".join(parts) + " mbb/g"


#: Pot-size classes of an LBR hand (big blinds won or lost, upper bounds): ½ bb (the small blind
#: folded), 1 bb (the big blind folded to a raise), then called raises and bets, then stacks.
POT_CLASSES = ((0.75, "1/2 bb"), (1.5, "1 bb"), (5.0, "1.5-5 bb"), (20.0, "5-20 bb"), (80.0, "20-80 bb"), (float("inf"), "80-200 bb"))


def _by_pot(hands: np.ndarray, big_blind: float, per_chip: float) -> str:
    """LBR's all-in adjusted result split by the size of what each hand won or
    lost (``hands``: chips per hand, both seats of every pair), mbb/g of the
    total with 95 % intervals: the small pots, LBR's bets at a bot that folds,
    are measured far more tightly than the total, whose noise is the stacks."""
    size = np.abs(hands) / big_blind
    low = 0.0
    parts = []
    for high, label in POT_CLASSES:
        ci = mean_ci(np.where((size >= low) & (size < high), hands, 0.0)).scaled(per_chip)
        parts.append(f"{label} {ci.mean:+.0f} ± {ci.half_width:.0f}")
        low = high
    return "LBR's winnings by pot size (all-in adjusted, per hand): " + ", ".join(parts) + " mbb/g"


#: Lines shown by :func:`_by_line`: the ones that moved the most of LBR's total.
TOP_LINES = 8


def _by_line(hands: np.ndarray, betting: np.ndarray, game: Game, per_chip: float) -> str:
    """Where LBR's all-in adjusted winnings came from: each hand's line is LBR's
    blind, the pre-flop betting with the raise sizes left out, and the street
    where the hand ended, by a fold or at a showdown (``hands``, ``betting``:
    ``[pairs, 2]``, LBR in position 0 then 1). The lines that moved the total most,
    each with its hands, its mean in big blinds and its share of the total in
    mbb/g (they sum to it over all lines): a leak read in a few lines where the
    pot-size split says only how big the pots were."""
    big = int(np.argmax(game.blind))
    streets = ("pre-flop", "flop", "turn", "river")
    totals: dict[str, list[float]] = {}
    for (pair, position), text in np.ndenumerate(betting):
        text = str(text)
        rounds = text.split("/")
        pre = "".join(c for c in rounds[0] if not c.isdigit())
        end = "folded" if text.endswith("f") else "showdown"
        key = f"LBR {'big' if position == big else 'small'} blind, {pre or '-'}, {end} on the {streets[min(len(rounds), 4) - 1]}"
        totals.setdefault(key, []).append(float(hands[pair, position]))
    n = hands.size
    rows = sorted(totals.items(), key=lambda item: -abs(sum(item[1])))[:TOP_LINES]
    parts = [f"{key}: {len(v)} hands, {np.mean(v) / max(game.blind):+.1f} bb, {sum(v) / n * per_chip:+.0f}" for key, v in rows]
    return "LBR's winnings by line (all-in adjusted, mbb/g of the total; the biggest):\n  " + "\n  ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=1000, help="LBR duplicate pairs")
    parser.add_argument("--h2h-hands", type=int, default=200, help="head-to-head deals, each in both seatings")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot", default=BOT, help=f"the bot measured (default {BOT})")
    parser.add_argument("--anchor", default=RESOLVER, help=f"the head-to-head opponent (default {RESOLVER}; e.g. hunl-ehs2-3)")
    parser.add_argument("--save", type=Path, help="write every pair's and deal's figures (chips), and LBR's hands' betting, to this .npz")
    parser.add_argument(
        "--pool", type=Path, nargs="+", metavar="FILE.npz",
        help="play nothing: LBR's figures over the pairs of these --save files (runs of other seeds, one bot; the files say which)",
    )  # fmt: skip
    args = parser.parse_args()
    game = load_game("hunl")
    per_chip = 1000 / max(game.blind)  # mbb/g
    if args.pool:
        saved = [_saved_lbr(path, parser) for path in args.pool]
        bot = _pooled_bot([(path, run) for path, (_, _, run) in zip(args.pool, saved)], args.bot, parser)
        bettings = [b for _, b, _ in saved if b is not None]
        betting = np.concatenate(bettings) if len(bettings) == len(saved) else None
        _report(np.concatenate([lbr for lbr, _, _ in saved]), f"{bot} (pooled: {len(args.pool)} files)", game, None, betting)
        return
    for spec in (args.bot, *((args.anchor,) if args.h2h_hands else ())):
        try:  # here, not in a worker: a bad spec is one line, not a worker's traceback
            make_strategy(spec, game, seed=0)
        except StrategyError as error:
            parser.error(str(error))
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        h2h_jobs = [(args.bot, args.anchor, args.seed + k, len(part)) for k, part in enumerate(np.array_split(np.arange(args.h2h_hands), args.workers)) if len(part)]
        lbr_jobs = [(args.bot, args.seed, a, min(a + LBR_CHUNK, args.hands)) for a in range(0, args.hands, LBR_CHUNK)]
        h2h = np.concatenate(list(pool.map(head_to_head, h2h_jobs))) if h2h_jobs else np.zeros((0, len(ESTIMATORS)))
        h2h_seconds = time.perf_counter() - started
        if h2h_jobs:
            print(
                _line(f"head to head, duplicate, {args.bot} vs {args.anchor}, HUNL, {args.h2h_hands} deals x 2 seatings"
                      f" ({h2h_seconds:.0f} s, {args.workers} workers)", h2h, per_chip),
                flush=True,
            )  # fmt: skip
        chunks = list(pool.map(lbr_chunk, lbr_jobs))
        lbr = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros((0, 2, len(ESTIMATORS)))
        betting = np.array([b for c in chunks for b in c[1]], dtype=str).reshape(-1, 2)
    lbr_seconds = time.perf_counter() - started - h2h_seconds
    if args.save:  # per-pair figures, so runs with other seeds can be pooled later
        np.savez_compressed(
            args.save, estimators=np.array(ESTIMATORS), h2h=h2h, lbr=lbr, betting=betting, bot=np.array(args.bot), seed=np.array(args.seed)
        )  # fmt: skip
    if not lbr_jobs:
        return
    _report(lbr, args.bot, game, f"{lbr_seconds:.0f} s, {lbr_seconds / (2 * args.hands):.1f} s a hand, {args.workers} workers", betting)


def _saved_lbr(path: Path, parser: argparse.ArgumentParser) -> tuple[np.ndarray, np.ndarray | None, tuple[str, int] | None]:
    """The LBR pairs of a ``--save`` file, ``float64[pairs, 2, len(ESTIMATORS)]``,
    their hands' betting ``[pairs, 2]`` and the run's ``(bot, seed)`` (each None
    in files saved before it was kept); a bad file: one line."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            estimators, lbr = tuple(str(e) for e in saved["estimators"]), saved["lbr"]
            betting = saved["betting"] if "betting" in saved.files else None
            run = (str(saved["bot"]), int(saved["seed"])) if "bot" in saved.files else None
    except (OSError, KeyError, ValueError) as error:
        parser.error(f"{path}: not a --save file of this script ({error})")
    if estimators != ESTIMATORS or lbr.ndim != 3 or lbr.shape[1:] != (2, len(ESTIMATORS)):
        parser.error(f"{path}: its estimators or shape are not this script's")
    if betting is not None and betting.shape != lbr.shape[:2]:
        parser.error(f"{path}: its betting does not match its pairs")
    return np.asarray(lbr, dtype=np.float64), betting, run


def _pooled_bot(runs: list[tuple[Path, tuple[str, int] | None]], default: str, parser: argparse.ArgumentParser) -> str:
    """The bot the pooled files measured (``default``, ``--bot``, where none says):
    one line where they name two bots, or one seed twice (a seed deals the same
    cards, and the bot's play is reproducible from it, so its pairs would count twice)."""
    known = [(path, run) for path, run in runs if run is not None]
    bots = sorted({bot for _, (bot, _) in known})
    if len(bots) > 1:
        parser.error(f"the files measured different bots ({', '.join(bots)}): pool runs of one bot")
    seen: dict[int, Path] = {}
    for path, (_, seed) in known:
        if seed in seen:
            parser.error(f"{seen[seed]} and {path} are both seed {seed}: the same deals would count twice")
        seen[seed] = path
    return bots[0] if bots else default


def _report(lbr: np.ndarray, bot: str, game: Game, timing: str | None, betting: np.ndarray | None) -> None:
    """LBR's lines (module docstring, 2 and 3) for the pairs ``lbr`` (``[pairs, 2, estimators]``, chips),
    by line too where the hands' ``betting`` is known."""
    per_chip = 1000 / max(game.blind)  # mbb/g
    pairs = lbr.mean(axis=1)  # a duplicate pair's mean
    detail = f" ({timing})" if timing else ""
    print(_line(f"LBR (fcpa, every street) vs {bot}, HUNL, {len(pairs)} duplicate pairs{detail}", pairs, per_chip), flush=True)
    k = ESTIMATORS.index("all-in adjusted")
    print(_by_pot(lbr[:, :, k].ravel(), float(max(game.blind)), per_chip), flush=True)
    if betting is not None and len(betting):
        print(_by_line(lbr[:, :, k], betting, game, per_chip), flush=True)
    best = mean_ci(pairs[:, k]).scaled(per_chip)
    ratio = (ALWAYS_FOLD - best.mean) / (ALWAYS_FOLD - DEEPSTACK[0])
    print(
        f"HUNL LBR fcpa every street vs {bot}: {best.mean:.0f} ± {best.half_width:.0f} mbb/g (95%, {ESTIMATORS[k]})"
        f" vs DeepStack {DEEPSTACK[0]:.0f} ± {DEEPSTACK[1]:.0f} ratio {ratio:.2f}"
    )

if __name__ == "__main__":
    main()
