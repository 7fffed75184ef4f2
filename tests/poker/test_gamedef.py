"""Game definitions: the reference reader's leniency, its validation, the canonical writer."""

from pathlib import Path

import pytest

from poker.gamedef import Betting, GameDefError, format_game, friendly_name, game_names, load_game, parse_game, short_name

SHIPPED = [
    "holdem.limit.2p.reverse_blinds",
    "holdem.nolimit.2p.reverse_blinds",
    "holdem.limit.3p",
    "holdem.nolimit.3p",
    "holdem.nolimit.6p",
    "kuhn.limit.3p",
    "leduc.limit.2p",
    "leduc.nolimit.2p",
    "holdem.limit.2p",
]


@pytest.mark.parametrize("stem", SHIPPED)
def test_reference_files_parse_format_and_match_ours(acpc_dir: Path, stem: str) -> None:
    text = (acpc_dir / "games" / f"{stem}.game").read_text()
    game = parse_game(text, source=stem)
    if stem.startswith("holdem"):
        # These files are in printGame's canonical form, so formatting is byte-identical;
        # the others spell out firstPlayer = 1, which printGame omits.
        assert format_game(game) == text
    assert parse_game(format_game(game)) == game
    assert load_game(stem) == game


def test_hulhe_fields_are_read_with_zero_based_first_player() -> None:
    game = load_game("hulhe")
    assert game.betting is Betting.LIMIT
    assert game.blind == (10, 5)
    assert game.raise_size == (10, 10, 20, 20)
    assert game.first_player == (1, 0, 0, 0)
    assert game.max_raises == (3, 4, 4, 4)
    assert game.num_board_cards == (0, 3, 1, 1)
    assert game.stack == (2**31 - 1,) * 2
    assert game.big_blind == 10


def test_project_games_exist_under_short_names() -> None:
    names = game_names()
    for name in ["kuhn", "kuhn3p", "leduc", "leduc.nolimit", "hulhe", "hunl", "holdem.nolimit.6p", "leduc.limit.3p"]:
        assert name in names
    kuhn = load_game("kuhn")
    assert (kuhn.num_players, kuhn.num_ranks, kuhn.num_suits, kuhn.blind, kuhn.max_raises) == (2, 3, 1, (1, 1), (1,))
    nl_leduc = load_game("leduc.nolimit")
    assert (nl_leduc.stack, nl_leduc.blind, nl_leduc.betting) == ((1200, 1200), (100, 100), Betting.NOLIMIT)


def test_each_game_has_one_short_name_and_one_friendly_name() -> None:
    """Lists show a game once, by its shortest name, with the name players know."""
    assert [short_name(n) for n in ("holdem.limit.2p.reverse_blinds", "holdem.limit", "hulhe", "kuhn.limit.2p")] == [
        "hulhe", "hulhe", "hulhe", "kuhn"
    ]
    assert (friendly_name("hulhe"), friendly_name("holdem.nolimit.2p"), friendly_name("leduc.limit.2p")) == (
        "Heads-up limit hold'em", "Heads-up no-limit hold'em", "Leduc hold'em"
    )
    assert all(friendly_name(stem) != stem for stem in game_names().values())  # every shipped game has one
    assert (short_name("my.game"), friendly_name("my.game")) == ("my.game", "my.game")  # no shipped game: as given


def test_lenient_syntax_of_the_reference_reader() -> None:
    text = (
        "# a comment line\n"
        "\n"
        "limitations are read as limit\n"  # prefix match
        "NUMPLAYERS=2\n"  # case-insensitive, '=' without spaces
        "numRounds 1\n"  # no '=' at all
        "blind = 1 = 2 junk 7\n"  # '=' between numbers; reading stops at 'junk'
        "  numSuits = 4\n"  # leading whitespace: silently ignored
        "numSuits = 1\n"
        "numRanks = 3\n"
        "numRanks = 4 # a later line overwrites; '#' mid-line is not a comment\n"
        "raiseSize = 1\n"
        "numHoleCards = 1\n"
        "numBoardCards = 0\n"
        "END GAMEDEF\n"
        "numPlayers = 9\n"  # after the end marker: never read
    )
    game = parse_game(text)
    assert game.betting is Betting.LIMIT
    assert game.num_players == 2
    assert game.blind == (1, 2)
    assert (game.num_suits, game.num_ranks) == (1, 4)
    assert game.first_player == (0,)
    assert game.max_raises == (255,)


def test_crlf_files_parse() -> None:
    text = (Path(__file__).parents[2] / "poker" / "games" / "leduc.limit.2p.game").read_text()
    assert parse_game(text.replace("\n", "\r\n")) == load_game("leduc")


def test_openspiel_style_file_with_comments_and_any_order() -> None:
    text = """# (Empty lines and lines starting with an '#' are all ignored)

GAMEDEF
nolimit
numPlayers = 3
numRounds = 1
numSuits = 2
numRanks = 4
numHoleCards = 1

# Set per player, so 3 total
stack = 15 15 15
blind = 0 1 0

# Set per round
firstPlayer = 3
numBoardCards = 0

END GAMEDEF
"""
    game = parse_game(text)
    assert (game.stack, game.blind, game.first_player, game.betting) == ((15,) * 3, (0, 1, 0), (2,), Betting.NOLIMIT)
    assert parse_game(format_game(game)) == game


def _base(extra: str = "", players: int = 2) -> str:
    return (
        f"GAMEDEF\nnolimit\nnumPlayers = {players}\nnumRounds = 1\nblind = {' '.join(['1'] * players)}\n"
        f"numSuits = 4\nnumRanks = 13\nnumHoleCards = 1\nnumBoardCards = 0\n{extra}END GAMEDEF\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_base(players=6), r"g.game: only read 4 stack sizes, need 6"),  # the reference quirk
        (_base(players=11), r"g.game:3: numPlayers = 11 is outside 2..10"),
        (_base("stack = 1 0\n"), r"g.game:10: stack of position 1 is 0"),
        (_base("stack = 5 5\nblind = 1 6\n"), r"g.game:11: blind 6 of position 1 exceeds its stack 5"),
        (_base("firstPlayer = 3\n"), r"g.game:10: firstPlayer 3 of round 0 is outside 1..2"),
        (_base().replace("numHoleCards = 1\n", ""), r"g.game: numHoleCards is missing"),
        (_base().replace("numRanks = 13", "numRanks = 1").replace("numSuits = 4", "numSuits = 1"),
         r"g.game:9: 2 cards are dealt but the deck has only 1"),
        (_base().replace("nolimit", "limit"), r"g.game: only read 0 raise sizes, need 1"),
        (_base("numRounds = two\n"), r"g.game:10: 'numRounds = two' gives no number"),
        (_base("blind = -1 1\n"), r"g.game:10: blind value -1 is negative"),
    ],
)
def test_bad_game_files_name_the_file_line_and_rule(text: str, message: str) -> None:
    with pytest.raises(GameDefError, match=message):
        parse_game(text, source="g.game")


def test_six_player_game_needs_and_reads_a_stack_line() -> None:
    game = load_game("holdem.nolimit.6p")
    assert game.stack == (20000,) * 6
    assert game.blind == (50, 100, 0, 0, 0, 0)


def test_unknown_game_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(GameDefError, match="neither a game file nor a known game name; names: .*kuhn"):
        load_game("no-such-game")
    bad = tmp_path / "bad.game"
    bad.write_bytes(b"numPlayers = 2\n\xff\n")
    with pytest.raises(GameDefError, match="bad.game: byte 15 is not ASCII"):
        load_game(bad)


def test_load_game_reads_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.game"
    path.write_text(format_game(load_game("leduc")))
    assert load_game(path) == load_game("leduc")
    assert load_game(str(path)) == load_game("leduc")


def test_a_missing_path_is_reported_as_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "mine.game"
    with pytest.raises(GameDefError, match=rf"^{missing}: no such file$"):
        load_game(missing)
    with pytest.raises(GameDefError, match=r"^holdem\.limit\.9p\.game: no such file$"):
        load_game("holdem.limit.9p.game")
    with pytest.raises(GameDefError, match=rf"^{tmp_path}: is a directory, not a game file$"):
        load_game(tmp_path)
