"""``arena analyze LOGS... [--format table|json]``: per player results of ACPC logs.

LOGS are ``.log`` files (ours or the reference dealer's), ``*.hands.msgpack``
hand records, or folders (their ``*.log`` files, else their records). For each
seat name it prints the hands played, the mean per hand in the game's unit
(:func:`poker.stats.unit_of`: mbb/g for games with blinds, chips/hand
otherwise), the standard deviation per hand and the 95% interval of the mean.
When logs are the seatings of duplicate matches (:mod:`analysis.duplicate`),
the duplicate estimate follows: per hand, each player's result averaged over
the seatings, then mean and interval over hands. ``--format json`` prints the
same as one JSON document.

``--strategy SPEC --player NAME``: NAME played the strategy SPEC (any spec
whose ``policy()`` exists, e.g. ``leduc-cfr`` or ``tilt:preset=orange``; not a
portfolio, whose policy changes from hand to hand), so its hands are also
estimated with lower-variance, unbiased estimators, on-policy and with full
information (an ACPC log shows every card): raw money,
:func:`analysis.importance.estimate`'s basic, early-folds, all-cards and
all-cards+early-folds, and :func:`analysis.aivat.aivat`. AIVAT's value function
must be fixed before the data: where the public tree can be built (Kuhn, Leduc)
it is :class:`analysis.aivat.TreeValues` of SPEC against SPEC itself (its exact
values in self-play), derived from the named strategy alone and never from the
logs or the opponent; in limit hold'em it is :class:`analysis.aivat.EquityValues`
(pot share by showdown equity), limit and no-limit (where SPEC's policy must
have a column for every raise size seen: the minimum and all-in by default).
Needs a two-player game.

No-limit logs also get the all-in adjusted estimate (:mod:`analysis.allin`) per
player and, for duplicate seatings, its duplicate form. Logs with a portfolio
agent's side files (:func:`analysis.hands.read_components`) get a table per
component. ``--report PATH.html`` writes a self-contained HTML report
(:mod:`analysis.report`).

Exit statuses: 0 done; 1 a log that cannot be read, logs of different games,
logs that look like one duplicate match but do not pair (one line on stderr
naming file, line or hand), hands the named strategy could not have played, a
game the estimators do not handle, or a report that cannot be written; 2 usage
(including a strategy that cannot be built or has no policy, and a player not
in the logs).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from analysis.breakdown import estimate, summarize
from analysis.clitools import EXIT_USAGE, UsageParser, table_lines
from analysis.duplicate import DuplicateError, DuplicateSet, combined_estimates, find_duplicates
from analysis.hands import Hands, HandsError, concat, is_records, read_hands
from poker.gamedef import Game, GameDefError, load_game, shipped_name
from poker.stats import Estimate, Unit, mean_ci, unit_of

if TYPE_CHECKING:
    from analysis.aivat import ValueFunction
    from strategies.base import Strategy

__all__ = ["main", "analyze", "estimators", "estimator_table", "aivat_column", "allin_document", "EstimatorError", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_FAILED = 1
PROG = "arena analyze"
#: The largest public tree (nodes x private hands) the estimators build.
MAX_TREE_ENTRIES = 1_000_000


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog=PROG,
        description="Per player results of ACPC match logs: raw means with 95%% intervals, the "
        "duplicate estimate when the logs are the seatings of duplicate matches, and with --strategy/--player "
        "importance-sampling and AIVAT estimates of that player.",
        epilog="exit status: 0 done, 1 unreadable or mismatched logs, hands --strategy could not have played, a game "
        "the estimators do not handle or an unwritable report, 2 usage",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help=".log files, *.hands.msgpack records, or folders of them")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    parser.add_argument("--game", help="game name or file, when a log's header does not name a game this machine has")
    parser.add_argument("--skip-damaged", action="store_true", help="leave damaged lines and records out (listed) instead of failing")
    parser.add_argument("--validate", action="store_true", help="replay every hand with the rules (slow)")
    parser.add_argument(
        "--strategy",
        metavar="SPEC",
        help="the strategy --player played (needs policy(); two-player): adds importance-sampling and AIVAT"
        " estimates",
    )
    parser.add_argument("--player", metavar="NAME", help="the seat name that played --strategy")
    parser.add_argument("--report", metavar="PATH", help="also write a self-contained HTML report to PATH")
    return parser


def _paths(arguments: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            found = sorted(path.glob("*.log")) or sorted(path.glob("*.hands.msgpack"))
            if not found:
                raise HandsError(f"{path}: no .log or .hands.msgpack files in this folder")
            paths += found
        else:
            paths.append(path)
    return paths


def _json_estimate(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    scaled = estimate.scaled(unit.per_chip)
    return {"hands": estimate.n, "mean": scaled.mean, "ci95": None if math.isnan(scaled.half_width) else scaled.half_width}


def analyze(tables: Sequence[Hands], every: Hands | None = None) -> dict[str, Any]:
    """The report as a JSON-ready document (means in the game's unit); ``every`` is
    ``concat(tables)`` when the caller has it already.

    Raises:
        HandsError: logs of different games.
        DuplicateError: logs that look like one duplicate match but do not pair.
    """
    if every is None:
        every = concat(tables)
    game = every.game
    unit = unit_of(game)
    sets, _ = find_duplicates(tables)
    players = []
    for row in summarize(every):
        entry = {"name": row.name, "total_chips": row.total, **_json_estimate(row.estimate, unit)}
        entry["std"] = None if math.isnan(row.std) else row.std * unit.per_chip
        players.append(entry)
    document: dict[str, Any] = {
        "game": shipped_name(game) or "game",
        "unit": unit.name,
        "logs": [t.source for t in tables],
        "hands": len(every),
        "skipped_lines": {t.source: list(t.skipped) for t in tables if t.skipped},
        "players": players,
        "duplicate": None,
    }
    if sets:
        document["duplicate"] = _duplicate_document(sets, unit)
    if not game.is_limit:
        document["allin"] = allin_document(tables, every)
    if every.components:
        document["components"] = component_rows(every)
    return document


def component_rows(every: Hands) -> list[dict[str, Any]]:
    """Per portfolio agent and component, the hands that component played and
    their mean, std-dev and 95% interval in the game's unit (money: the
    components' hands are not a random sample of the deals once the choice
    depends on what came before, so these say how each was used and fared, not
    what each is worth)."""
    unit = unit_of(every.game)
    rows = []
    for name, labels in every.components.items():
        chips = every.name_values(name)
        column = np.array(labels, dtype=object)
        for label in dict.fromkeys(label for label in labels if label):
            played = chips[(column == label) & ~np.isnan(chips)]
            std = float(np.std(played, ddof=1)) * unit.per_chip if played.size > 1 else None
            rows.append({"name": name, "component": label, **_json_estimate(estimate(played), unit), "std": std})
    return rows


def _duplicate_document(sets: Sequence[DuplicateSet], unit: Unit) -> dict[str, Any]:
    estimates = combined_estimates(sets)
    return {
        "sets": [[t.source for t in d.tables] for d in sets],
        "hands": sum(d.hand_id.size for d in sets),
        "players": [{"name": name, **_json_estimate(e, unit)} for name, e in estimates.items()],
    }


def allin_document(tables: Sequence[Hands], every: Hands) -> dict[str, Any]:
    """The all-in adjusted estimate (:mod:`analysis.allin`) of no-limit logs:
    per player over every hand, and the duplicate estimate of the adjusted
    values when the logs are duplicate seatings; ``every`` is ``concat(tables)``.

    Raises:
        HandsError: a hand whose betting or cards the adjustment cannot read.
    """
    from analysis.allin import AllInError, adjusted_hands

    try:
        adjusted, result = adjusted_hands(every)
    except AllInError as error:
        raise HandsError(str(error)) from None
    unit = unit_of(every.game)
    players = []
    for row in summarize(adjusted):
        entry = {"name": row.name, **_json_estimate(row.estimate, unit)}
        entry["std"] = None if math.isnan(row.std) else row.std * unit.per_chip
        players.append(entry)
    starts = np.cumsum([0] + [len(t) for t in tables])
    split = [replace(t, values=adjusted.values[a:b]) for t, a, b in zip(tables, starts[:-1], starts[1:])]
    sets, _ = find_duplicates(split)
    return {
        "hands_adjusted": int(result.adjusted.sum()),
        "players": players,
        "duplicate": _duplicate_document(sets, unit) if sets else None,
    }


class EstimatorError(ValueError):
    """The estimators cannot run: ``usage`` says whether the arguments (not the logs) are at fault."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


#: What AIVAT's value function is, for the documents: games whose public tree fits, and the others.
AIVAT_VALUES = "TreeValues: the named strategy against itself on the public tree, fixed before the data"
EQUITY_VALUES = (
    "EquityValues: pot share by showdown equity against the opponent's holding (exact from the flop,"
    " sampled without bias pre-flop), fixed before the data"
)
#: A portfolio's hands are estimated with the component that played each.
PORTFOLIO_VALUES = "TreeValues: the component that played each hand against itself on the public tree, fixed before the data"


@dataclass(frozen=True)
class _Group:
    """Hands (rows of the player's hands) played with one strategy, and AIVAT's value function for it."""

    rows: npt.NDArray[np.intp]
    sigma: Strategy
    values: ValueFunction
    spec: str


def _prepared(
    every: Hands, player: str, spec: str, *, tree_only: bool = False
) -> tuple[Hands, list[_Group], str]:
    """``player``'s hands; the strategy each was played with (``spec``, or for a
    portfolio the component its side file names for that hand) with AIVAT's value
    function (that strategy against itself on the public tree where it fits,
    else :class:`analysis.aivat.EquityValues`); and what that value function is;
    after every check of :func:`estimators`."""
    import strategies  # noqa: F401  (registers the built-in strategies)
    from analysis.aivat import EquityValues, TreeValues
    from poker.state import State
    from strategies.base import PublicState, StrategyError, make_strategy
    from strategies.cfr.tree.public import TreeError, build_tree
    from strategies.portfolio import PortfolioStrategy

    game = every.game
    if player not in every.names:
        raise EstimatorError(f"--player {player!r} is not in the logs (players: {', '.join(every.names)})", usage=True)

    def build(text: str) -> Strategy:
        try:
            return make_strategy(text, game, seed=0)
        except (StrategyError, ValueError, OSError) as error:
            raise EstimatorError(f"--strategy {text!r}: {error}", usage=True) from error

    sigma = build(spec)
    if game.num_players != 2:
        raise EstimatorError(f"the estimators need a two-player game, not {game.num_players} players", usage=False)
    held = (every.name_index == every.names.index(player)).any(axis=1)
    hands = every.take(held)
    if len(hands) < 2:
        raise EstimatorError(f"--player {player!r} played {len(hands)} hands; the estimators need two", usage=True)
    portfolio = isinstance(sigma, PortfolioStrategy)
    if portfolio:
        labels = hands.components.get(player)
        if labels is None or not all(labels):
            raise EstimatorError(
                f"--strategy {spec!r}: a portfolio's policy is its component's, which changes from hand to hand, and"
                f" these logs do not say which component played every hand of {player!r}"
                " (no <match>.<name>.components.csv beside them)",
                usage=True,
            )
        column = np.array(labels, dtype=object)
        plays = [(np.flatnonzero(column == label), label.replace(";", ",")) for label in dict.fromkeys(labels)]
    else:
        plays = [(np.arange(len(hands)), spec)]
    fits = False  # a no-limit tree is an abstraction: its states are not every state a log holds
    if game.is_limit:
        try:
            tree = build_tree(game, max_entries=MAX_TREE_ENTRIES)
            fits = tree.num_nodes * tree.num_hands * tree.num_hands <= 2 * MAX_TREE_ENTRIES
        except (TreeError, MemoryError):
            pass
    if not fits and tree_only:
        raise EstimatorError("the public tree is too big for exact values (EquityValues would be needed)", usage=False)
    groups = []
    for rows, text in plays:
        strategy = build(text) if portfolio else sigma
        try:
            if fits:
                values: ValueFunction = TreeValues(tree, strategy, strategy)
            else:
                strategy.policy(PublicState(State(game), ()))  # a strategy without a policy fails here, not per hand
                values = EquityValues(game)
        except NotImplementedError as error:
            raise EstimatorError(f"--strategy {text!r}: {error}", usage=True) from error
        groups.append(_Group(rows, strategy, values, text))
    return hands, groups, (PORTFOLIO_VALUES if portfolio else AIVAT_VALUES) if fits else EQUITY_VALUES


def _stitched(hands: Hands, groups: list[_Group], player: str, *, importance: bool) -> dict[str, npt.NDArray[np.float64]]:
    """Per-hand columns of every estimator (AIVAT only unless ``importance``), each
    group of hands estimated with its own strategy, back in the hands' order.

    Raises:
        EstimatorError: hands a group's strategy could not have played.
    """
    from analysis.aivat import aivat
    from analysis.importance import ImportanceError, estimate

    columns: dict[str, npt.NDArray[np.float64]] = {}
    for group in groups:
        part = hands.take(group.rows)
        try:
            found = dict(estimate(part, player, group.sigma).columns()) if importance else {}
            found["aivat"] = aivat(part, player, group.sigma, group.values).estimate
        except ImportanceError as error:
            raise EstimatorError(f"--strategy {group.spec!r} could not have played these hands: {error}", usage=False) from error
        except NotImplementedError as error:  # no-limit: a raise size the policy has no column for
            raise EstimatorError(f"--strategy {group.spec!r}: {error}", usage=False) from error
        for name, values in found.items():
            columns.setdefault(name, np.zeros(len(hands)))[group.rows] = values
    return columns


def aivat_column(
    every: Hands, player: str, spec: str, *, tree_only: bool = False
) -> tuple[Hands, npt.NDArray[np.float64]]:
    """``player``'s hands in ``every`` and their AIVAT values (chips, on-policy
    for ``spec``; value function as in :func:`estimators`; ``tree_only``: only
    where the public tree gives exact values, which costs microseconds a hand
    where :class:`analysis.aivat.EquityValues` costs tens of milliseconds).

    Raises:
        EstimatorError: as :func:`estimators`.
    """
    hands, groups, _ = _prepared(every, player, spec, tree_only=tree_only)
    return hands, _stitched(hands, groups, player, importance=False)["aivat"]


def estimators(every: Hands, player: str, spec: str) -> list[dict[str, Any]]:
    """:func:`estimator_table`'s rows."""
    return estimator_table(every, player, spec)[0]


def estimator_table(every: Hands, player: str, spec: str) -> tuple[list[dict[str, Any]], str]:
    """``player``'s hands in ``every`` estimated on-policy for the strategy ``spec``:
    ``[{"name", "mean", "std", "ci95", "hands"}, …]`` in the game's unit (raw,
    basic, early-folds, all-cards, all-cards+early-folds, aivat), and what
    AIVAT's value function was (:data:`AIVAT_VALUES`, :data:`EQUITY_VALUES` or
    :data:`PORTFOLIO_VALUES`). A portfolio's hands are each estimated with the
    component that played it (the logs' side files say which): the choice is
    made before the hand's cards, so each hand's estimate stays unbiased.

    Raises:
        EstimatorError: a spec that cannot be built or has no policy, a player
            not in the hands, a portfolio without side files (usage); a game
            not two-player limit, hands the strategy could not have played (not usage).
    """
    hands, groups, described = _prepared(every, player, spec)
    game = every.game
    columns = _stitched(hands, groups, player, importance=True)
    unit = unit_of(game)
    rows = []
    for name, column in columns.items():
        ci = mean_ci(column).scaled(unit.per_chip)
        std = float(np.std(column, ddof=1)) * unit.per_chip
        rows.append({"name": name, "mean": ci.mean, "std": std, "ci95": ci.half_width, "hands": ci.n})
    return rows, described


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _player_lines(players: list[dict[str, Any]], unit: str) -> list[str]:
    """A table of per-player rows (with a std-dev column when the rows have one)."""
    std = all("std" in p for p in players)
    rows = [["player", "hands", unit, *(["std-dev"] if std else []), "95% CI"]]
    for p in players:
        ci = "-" if p["ci95"] is None else f"±{p['ci95']:.3f}"
        rows.append([p["name"], str(p["hands"]), _number(p["mean"]), *([_number(p["std"])] if std else []), ci])
    return table_lines(rows)


def _values_summary(about: dict[str, Any]) -> str:
    if about["aivat_values"] == AIVAT_VALUES:
        return f"{about['strategy']} against itself"
    if about["aivat_values"] == PORTFOLIO_VALUES:
        return "each hand's component against itself"
    return "pot share by showdown equity"


def format_report(document: dict[str, Any]) -> str:
    """The table form of :func:`analyze`'s document."""
    unit = document["unit"]
    logs = document["logs"]
    lines = [f"{document['game']}: {document['hands']} hands in {len(logs)} log{'s' * (len(logs) != 1)}, {unit}"]
    lines += _player_lines(document["players"], unit)
    for source, skipped in document["skipped_lines"].items():
        what = "record" if is_records(source) else "line"
        lines.append(f"skipped {len(skipped)} damaged {what}{'s' * (len(skipped) != 1)} of {source}: {', '.join(map(str, skipped[:10]))}{' …' if len(skipped) > 10 else ''}")
    duplicate = document["duplicate"]
    if duplicate is not None:
        sets = duplicate["sets"]
        lines.append(
            f"duplicate: {len(sets)} set{'s' * (len(sets) != 1)} of {len(sets[0])} seatings, "
            f"{duplicate['hands']} hands (each averaged over its seatings)"
        )
        lines += _player_lines(duplicate["players"], unit)
    allin = document.get("allin")
    if allin is not None:
        lines.append(
            f"all-in adjusted: {allin['hands_adjusted']} of {document['hands']} hands all in before the board was"
            " complete, valued at their expectation over the remaining board"
        )
        lines += _player_lines(allin["players"], unit)
        if allin["duplicate"] is not None:
            lines.append("duplicate, all-in adjusted (each hand averaged over its seatings)")
            lines += _player_lines(allin["duplicate"]["players"], unit)
    components = document.get("components")
    if components:
        lines.append("portfolio components (the hands each played)")
        rows = [["player", "component", "hands", unit, "std-dev", "95% CI"]]
        for c in components:
            ci = "-" if c["ci95"] is None else f"±{c['ci95']:.3f}"
            rows.append([c["name"], c["component"], str(c["hands"]), _number(c["mean"]), _number(c["std"]), ci])
        lines += table_lines(rows, left=(0, 1))
    chosen = document.get("estimators")
    if chosen:
        about = document["estimated"]
        lines.append(
            f"estimators for {about['player']} playing {about['strategy']} (on-policy, full information;"
            f" AIVAT values: {_values_summary(about)})"
        )
        rows = [["estimator", "hands", unit, "std-dev", "95% CI"]]
        for e in chosen:
            rows.append([e["name"], str(e["hands"]), _number(e["mean"]), _number(e["std"]), f"±{e['ci95']:.3f}"])
        lines += table_lines(rows)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.strategy is None) != (args.player is None):
        parser.error("--strategy and --player go together")
    game: Game | None = None
    try:
        if args.game is not None:
            game = load_game(args.game)
    except GameDefError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        tables = [
            read_hands(path, game, skip_damaged=args.skip_damaged, validate=args.validate) for path in _paths(args.logs)
        ]
        for end in (end for table in tables for end in table.damaged_ends):  # --skip-damaged: hands may be lost
            print(f"{PROG}: warning: {end}", file=sys.stderr)
        every = concat(tables)
        document = analyze(tables, every)
    except (HandsError, DuplicateError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.strategy is not None:
        try:
            rows, described = estimator_table(every, args.player, args.strategy)
            document["estimated"] = {"player": args.player, "strategy": args.strategy, "aivat_values": described}
            document["estimators"] = rows
        except EstimatorError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return EXIT_USAGE if error.usage else EXIT_FAILED
    if args.report is not None:
        from analysis.report import write_report

        try:
            write_report(Path(args.report), document, every)
        except OSError as error:
            print(f"{PROG}: error: cannot write the report {args.report}: {error.strerror or error}", file=sys.stderr)
            return EXIT_FAILED
    if args.format == "json":
        print(json.dumps(document, indent=2))
    else:
        print(format_report(document))
    return EXIT_OK
