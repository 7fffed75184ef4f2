"""``arena solve`` and ``arena exploitability`` end to end on Kuhn and Leduc (and a hold'em file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from poker.gamedef import load_game
from arena.commands import exploitability as cli_exploitability
from arena.commands import solve as cli
from strategies.cfr.best_response.exact import exploitability, profile_values
from strategies.cfr.solvers.pcs import bucket_strategy, tree_strategy
from strategies.cfr.strategy_file import BUCKETS, StrategyFile, load_strategy, save_strategy
from strategies.cfr.tree.betting import build_betting_tree
from strategies.cfr.tree.public import BettingAbstraction, build_tree


def test_cli_solve_then_exploitability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kuhn.strategy"
    assert cli.main(["kuhn", "--iterations", "200", "--every", "100", "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("iteration 100: exploitability ")
    assert printed[-1].startswith("cfr+ 200 iterations: exploitability ")
    saved = load_strategy(out)
    assert saved.iterations == 200 and saved.exploitability is not None
    assert cli_exploitability.main([str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"exploitability: {saved.exploitability:.9g} chips/hand"  # Kuhn has antes: no mbb/g


def test_cli_target_stops_at_the_first_measurement_below_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The benchmarks/cfr_leduc.py run: CFR+ with delay 150 measured every 10
    # iterations first reaches 2.6e-4 at iteration 680 (0.0002424364 chips/hand).
    out = tmp_path / "leduc.strategy"
    args = ["leduc", "--suit-isomorphism", "--delay", "150", "--every", "10", "--target", "2.6e-4"]
    assert cli.main([*args, "--iterations", "5000", "-o", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("cfr+ 680 iterations: exploitability 0.000242436")
    assert load_strategy(out).iterations == 680
    assert cli.main(["leduc", "--target", "0.1", "--iterations", "50", "-o", str(out), "--quiet"]) == 2
    assert "--target needs --every" in capsys.readouterr().err


def test_cli_resume_equals_one_long_run(tmp_path: Path) -> None:
    whole, half, rest = tmp_path / "whole", tmp_path / "half", tmp_path / "rest"
    assert cli.main(["leduc", "--algorithm", "cfr", "--iterations", "40", "-o", str(whole), "--quiet"]) == 0
    assert cli.main(["leduc", "--algorithm", "cfr", "--iterations", "15", "-o", str(half), "--quiet"]) == 0
    assert cli.main(["--resume", str(half), "--iterations", "40", "-o", str(rest), "--quiet"]) == 0
    a, b = load_strategy(whole), load_strategy(rest)
    assert b.iterations == 40 and b.algorithm == "cfr"
    assert np.allclose(a.arrays["cumulative"], b.arrays["cumulative"], rtol=1e-12, atol=0)


def test_cli_nolimit_bet_sizes(tmp_path: Path) -> None:
    out = tmp_path / "nl"
    assert cli.main(["leduc.nolimit", "--bet-sizes", "0.5,1", "--iterations", "3", "-o", str(out), "--quiet"]) == 0
    assert load_strategy(out).abstraction == BettingAbstraction((0.5, 1.0), all_in=True)  # the default is (1.0,)


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x")
    # usage (2) and failures (1) as docs/exit-statuses.md says
    assert cli.main(["leduc", "--bet-sizes", "1", "--iterations", "3", "-o", out, "--quiet"]) == 2
    assert "leduc is a limit game: --bet-sizes applies only to no-limit games" in capsys.readouterr().err
    assert cli.main(["nosuchgame", "--iterations", "3", "-o", out, "--quiet"]) == 2
    assert "is neither a game file nor a known game name" in capsys.readouterr().err
    assert cli.main(["holdem.nolimit.6p", "--iterations", "3", "-o", out, "--quiet"]) == 1
    assert "handles 2 players; the game has 6" in capsys.readouterr().err
    assert cli.main(["holdem.nolimit.3p", "--iterations", "3", "-o", out, "--quiet"]) == 1
    assert "three-player trees are for limit games" in capsys.readouterr().err
    assert cli_exploitability.main([str(tmp_path / "missing")]) == 2
    assert "arena exploitability: error:" in capsys.readouterr().err


def test_cli_ctrl_c_writes_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from strategies.cfr.solvers.solver import Solver

    real_run = Solver.run
    calls: list[int] = []

    def run_then_interrupt(self: Solver, iterations: int) -> None:
        if calls:
            raise KeyboardInterrupt
        calls.append(iterations)
        real_run(self, iterations)

    monkeypatch.setattr(Solver, "run", run_then_interrupt)
    out = tmp_path / "interrupted"
    assert cli.main(["kuhn", "--iterations", "1000", "-o", str(out), "--quiet"]) == 130
    assert f"interrupted at iteration {calls[0]}; checkpoint written to {out}" in capsys.readouterr().err
    saved = load_strategy(out)
    assert saved.iterations == calls[0] and saved.exploitability is None
    assert "regret" in saved.arrays and "cumulative" in saved.arrays


def test_cli_suit_isomorphism_gives_the_same_exploitability(tmp_path: Path) -> None:
    plain, iso = tmp_path / "plain", tmp_path / "iso"
    assert cli.main(["leduc", "--iterations", "50", "-o", str(plain), "--quiet"]) == 0
    assert cli.main(["leduc", "--iterations", "50", "--suit-isomorphism", "-o", str(iso), "--quiet"]) == 0
    a, b = load_strategy(plain), load_strategy(iso)
    assert b.isomorphism and not a.isomorphism
    assert b.exploitability == pytest.approx(a.exploitability, abs=1e-12)


# --algorithm abstract: CFR+ on the abstract game of a card abstraction ("none":
# lossless), written in the bucket layout that PCSStrategy plays.


def _abstract(game: str, spec: str, iterations: int, out: Path, *more: str) -> int:
    return cli.main([game, "--algorithm", "abstract", "--abstraction", spec, "--iterations", str(iterations),
                     "-o", str(out), "--quiet", *more])  # fmt: skip


def test_cli_abstract_solves_kuhn_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kuhn"
    assert _abstract("kuhn", "none", 1000, out, "--every", "500") == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("iteration 500: exploitability ") and printed[0].endswith(" in the abstract game")
    assert printed[-1] == (
        "abstract 1000 iterations: exploitability 8.73653e-05 chips/hand in the abstract game,"
        f" 8.73653e-05 chips/hand in the real game; wrote {out}"
    )
    saved = load_strategy(out)
    assert (saved.layout, saved.algorithm, saved.card_abstraction) == ("buckets", "abstract", "none")
    assert saved.iterations == 1000
    tree = build_tree(load_game("kuhn"))
    # Lossless: the abstract game is the real game.
    assert saved.exploitability == pytest.approx(saved.settings["abstract_game_exploitability"], abs=1e-12)
    assert saved.exploitability == pytest.approx(exploitability(tree, tree_strategy(saved, tree)), abs=1e-12)
    assert profile_values(tree, tree_strategy(saved, tree))[0] == pytest.approx(-1 / 18, abs=1e-3)


def test_cli_abstract_leduc_follows_the_public_tree_solver(tmp_path: Path) -> None:
    abstract, public = tmp_path / "abstract", tmp_path / "public"
    assert _abstract("leduc", "none", 10, abstract) == 0
    assert cli.main(["leduc", "--iterations", "10", "-o", str(public), "--quiet"]) == 0
    a, b = load_strategy(abstract), load_strategy(public)
    # Same CFR+ conventions (alternating, linear average): equal up to rounding.
    assert a.exploitability == pytest.approx(b.exploitability, abs=1e-12)
    assert np.allclose(tree_strategy(a, b.build_tree()), b.strategy, rtol=0, atol=1e-12)


def test_cli_abstract_float32_follows_float64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # float32 terminal products: the same solve up to float32 rounding, kept on resume.
    single, double, resumed = tmp_path / "single", tmp_path / "double", tmp_path / "resumed"
    assert _abstract("leduc", "none", 10, single, "--float32") == 0
    assert _abstract("leduc", "none", 10, double) == 0
    a, b = load_strategy(single), load_strategy(double)
    assert a.settings["single"] is True and b.settings["single"] is False
    assert a.exploitability == pytest.approx(b.exploitability, rel=1e-5)
    assert np.allclose(tree_strategy(a, a.build_tree()), tree_strategy(b, b.build_tree()), rtol=0, atol=1e-5)
    assert cli.main(["--resume", str(single), "--iterations", "12", "-o", str(resumed), "--quiet"]) == 0
    assert load_strategy(resumed).settings["single"] is True
    capsys.readouterr()
    assert cli.main(["leduc", "--float32", "--iterations", "3", "-o", str(tmp_path / "x"), "--quiet"]) == 2
    assert "--float32 applies to --algorithm abstract only" in capsys.readouterr().err


def test_cli_abstract_leduc_game_value(tmp_path: Path) -> None:
    out = tmp_path / "leduc"
    assert _abstract("leduc", "none", 400, out) == 0
    saved = load_strategy(out)
    tree = build_tree(load_game("leduc"))
    assert profile_values(tree, tree_strategy(saved, tree))[0] == pytest.approx(-0.085606424078, abs=1e-4)
    assert saved.exploitability == pytest.approx(saved.settings["abstract_game_exploitability"], abs=1e-12)
    assert saved.exploitability < 1.25e-3  # 0.00120691 measured


@pytest.mark.parametrize("spec", ["none", "ehs2:3:perfect"])
def test_cli_abstract_resume_is_bit_identical(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    whole, half, rest = tmp_path / "whole", tmp_path / "half", tmp_path / "rest"
    assert _abstract("leduc", spec, 40, whole, "--delay", "5") == 0
    assert _abstract("leduc", spec, 15, half, "--delay", "5") == 0
    assert cli.main(["--resume", str(half), "--iterations", "40", "-o", str(rest), "--quiet"]) == 0
    a, b = load_strategy(whole), load_strategy(rest)
    assert (b.iterations, b.algorithm, b.card_abstraction, b.settings["delay"]) == (40, "abstract", spec, 5)
    assert set(a.arrays) == {"strategy", "regret", "cumulative"}
    for name in a.arrays:
        assert np.array_equal(a.arrays[name], b.arrays[name]), name
    assert a.settings == b.settings and a.exploitability == b.exploitability


def test_cli_abstract_card_abstraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib
    import re

    from strategies.cfr.solvers.abstract_game import load_joint_tables
    from strategies.cfr.abstraction.card_abstraction import CardAbstraction, load_abstraction

    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bucketed"
    args = ["leduc", "--algorithm", "abstract", "--abstraction", "ehs2:3:perfect", "--iterations", "400"]
    args += ["-o", str(out)]
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    assert "joint bucket tables" in captured.err  # built, with a progress bar
    # The card abstraction and the joint bucket tables are integer arithmetic, the
    # same on every machine and for any number of workers: pinned exactly.
    abstraction = load_abstraction("ehs2:3:perfect", load_game("leduc"))  # from the cache
    assert isinstance(abstraction, CardAbstraction) and abstraction.digest == "440fa94b4404d7ac"
    tables = load_joint_tables(abstraction)
    assert tables.deals == 6 * 5 * 4 and np.array_equal(tables.showdown, -tables.showdown.T)
    assert hashlib.sha256(np.stack([tables.joint, tables.showdown]).astype("<i8").tobytes()).hexdigest()[:16] == (
        "448f152d920d7cd3"
    )
    # The CFR+ solve is floating point through OpenBLAS's matrix products, whose
    # kernel is picked per CPU at run time, and CFR+ amplifies their last-bit
    # differences (regret-matching+ clips at zero). OPENBLAS_CORETYPE=SkylakeX
    # (AVX-512), Haswell or Zen (AVX2), Sandybridge and older give 0.00145989,
    # 0.00147067, 0.00148483 chips/hand in the abstract game and 0.381634, 0.381622,
    # 0.381574 in the real game: the tolerances are about three times that spread
    # (other BLAS builds, MKL or Accelerate, round differently again). On one
    # machine the run repeats bit for bit (the second run below).
    line = captured.out.splitlines()[-1]
    found = re.fullmatch(
        r"abstract 400 iterations: exploitability (\S+) chips/hand in the abstract game,"
        r" (\S+) chips/hand in the real game; wrote (.+)",
        line,
    )
    assert found is not None and found[3] == str(out), line
    assert float(found[1]) == pytest.approx(0.00147, rel=0.03)
    assert float(found[2]) == pytest.approx(0.3816, abs=2e-4)
    assert cli.main(args) == 0
    again = capsys.readouterr()
    assert "joint bucket tables" not in again.err  # read from the cache
    assert again.out.splitlines()[-1] == line
    saved = load_strategy(out)
    assert saved.arrays["strategy"].shape == (3, 6 * 3 + 30 * 9)  # 6 and 30 decisions by round
    tree = build_tree(load_game("leduc"))
    played = bucket_strategy(saved).tree_strategy(tree)
    assert saved.exploitability == pytest.approx(exploitability(tree, played), abs=1e-12)
    assert cli_exploitability.main([str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    stored = saved.settings["abstract_game_exploitability"]
    assert lines[1] == (
        "abstract-game exploitability (stored; how well the abstraction was solved, not the real game's):"
        f" {stored:.9g} chips/hand"
    )
    assert lines[-1] == f"exploitability: {saved.exploitability:.9g} chips/hand"


def test_cli_exploitability_of_a_holdem_abstract_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = load_game("hulhe")
    tree = build_betting_tree(game)  # the fewest columns a bucket table of it can have: one a decision
    path = tmp_path / "hulhe"
    strategy = StrategyFile(
        game=game, abstraction=None, algorithm="abstract", iterations=7, exploitability=None,
        arrays={"strategy": np.full((3, tree.num_decisions), 1 / 3)}, settings={"abstract_game_exploitability": 0.0295},
        card_abstraction="ehs2:5:perfect", layout=BUCKETS,
    )  # fmt: skip
    save_strategy(path, strategy, tree)
    assert cli_exploitability.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "abstract-game exploitability (stored; how well the abstraction was solved, not the real game's):"
        " 2.95 mbb/g"  # 0.0295 chips/hand with a big blind of 10
    )
    assert lines[2].startswith("real-game exploitability: not measured (the public tree cannot be built: ")


def test_cli_abstract_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "x"
    assert cli.main(["leduc", "--algorithm", "abstract", "--iterations", "3", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena solve: error: --algorithm abstract needs --abstraction SPEC") and "Traceback" not in err
    assert _abstract("leduc", "hs:2:imperfect", 3, out) == 1
    assert "'hs:2:imperfect' has imperfect recall; the abstract game needs perfect" in capsys.readouterr().err
    assert _abstract("leduc", "none", 3, out, "--suit-isomorphism") == 2
    assert "--suit-isomorphism and --simultaneous apply to --algorithm cfr+ and cfr only" in capsys.readouterr().err
    assert _abstract("hulhe", "none", 3, out) == 1
    assert "too many to solve without a card abstraction" in capsys.readouterr().err
    assert not out.exists()


def test_cli_abstract_nolimit_bet_sizes(tmp_path: Path) -> None:
    out = tmp_path / "nl"
    assert _abstract("leduc.nolimit", "none", 3, out, "--bet-sizes", "0.5,1") == 0
    saved = load_strategy(out)
    assert saved.abstraction == BettingAbstraction((0.5, 1.0))
    assert saved.exploitability == pytest.approx(saved.settings["abstract_game_exploitability"], abs=1e-9)


def test_cli_abstract_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from strategies.cfr.solvers.abstract_game import AbstractCFR
    from strategies.cfr.solvers.abstract_solve import AbstractSolve

    real_run = AbstractCFR.run

    def run_then_interrupt(self: AbstractCFR, iterations: int) -> None:
        if self.iteration:
            raise KeyboardInterrupt
        real_run(self, iterations)

    monkeypatch.setattr(AbstractCFR, "run", run_then_interrupt)
    out = tmp_path / "interrupted"
    assert _abstract("kuhn", "none", 1000, out) == 130
    saved = load_strategy(out)
    assert f"interrupted at iteration {saved.iterations}; checkpoint written to {out}" in capsys.readouterr().err
    assert saved.iterations == 1 and saved.exploitability is None
    assert saved.settings["abstract_game_exploitability"] is None
    monkeypatch.setattr(AbstractCFR, "run", real_run)
    assert cli.main(["--resume", str(out), "--iterations", "5", "-o", str(out), "--quiet"]) == 0
    assert load_strategy(out).iterations == 5

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(AbstractSolve, "build", interrupt)
    assert _abstract("kuhn", "none", 3, tmp_path / "never") == 130
    assert "interrupted before the first iteration; nothing written" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_quiet_table_bars_follow_their_stages() -> None:
    # `arena bots build --quiet` crashed: a disabled tqdm keeps no desc to compare stages with.
    from arena.commands.solve import _Bars

    bars = _Bars(disable=True)
    for stage, done, total in [("a", 1, 3), ("a", 2, 3), ("b", 1, 2), ("a", 3, 3)]:
        bars.stage(stage, done, total)
        assert bars.name == stage
    assert bars.bar is None  # the last stage finished
