"""``arena train-values GAME -o FILE``: train the counterfactual-value network
that continual re-solving asks at the street's end; the training is
:mod:`strategies.resolve.train`'s (its docstring is this command's --help)."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from analysis.tables import plural
from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, fail, output_problem, parse, whole
from poker.gamedef import GameDefError, load_game
from strategies.resolve import train as training
from strategies.resolve.train import (
    REFINE_ROUNDS,
    REFINE_SITUATIONS,
    TrainError,
    agent_questions,
    agent_situations,
    check_game,
    generate,
    merge,
    train,
)

__all__ = ["main"]

PROG = "arena train-values"
_positive = whole(1)


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, training.__doc__ or "")
    parser.add_argument("game", help="a two-player no-limit game with few private hands (leduc.nolimit)")
    parser.add_argument("--situations", type=_positive, default=20000, help="random situations solved (default 20000)")
    parser.add_argument("--epochs", type=_positive, default=100, help="passes over the training situations (100)")
    parser.add_argument("--iterations", type=_positive, default=300, help="CFR+ iterations per situation (300)")
    parser.add_argument("--hidden", type=_positive, default=128, help="units per hidden layer (128)")
    parser.add_argument("--nets", type=_positive, default=1, help="networks fitted and averaged into one (1)")
    parser.add_argument(
        "--refine", type=whole(0), default=REFINE_ROUNDS,
        help=f"rounds of refinement on the questions the re-solving agent itself asks (default {REFINE_ROUNDS})",
    )
    parser.add_argument(
        "--refine-situations", type=_positive, default=REFINE_SITUATIONS,
        help=f"situations drawn from the agent's questions each round ({REFINE_SITUATIONS})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds every random draw (0)")
    parser.add_argument("-o", "--output", required=True, help="the model file (.npz) to write")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    from strategies.resolve.values import ValueNet, save_value_net

    try:
        game = load_game(args.game)
        check_game(game)
    except (GameDefError, TrainError) as error:
        return fail(PROG, error, EXIT_USAGE)
    output = Path(args.output)
    problem = output_problem(output, "model file")
    if problem is not None:
        return fail(PROG, f"-o {output}: {problem}", EXIT_USAGE)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    with tqdm(total=args.situations, desc="solving situations", unit="situation", disable=args.no_progress) as bar:
        data = generate(game, args.situations, iterations=args.iterations, rng=rng, progress=bar.update)
    with tqdm(total=args.epochs * args.nets, desc="training", unit="epoch", disable=args.no_progress) as bar:
        params, figures = train(data, hidden=args.hidden, epochs=args.epochs, rng=rng, nets=args.nets, progress=bar.update)
    refined = 0
    for round_ in range(1, args.refine + 1):
        net = ValueNet(game, game.num_rounds - 1, params[0::2], params[1::2], {"nets": args.nets})
        step = f"refining {round_}/{args.refine}"
        with tqdm(desc=f"{step}: the agent re-solves its first street", unit="re-solve", disable=args.no_progress) as bar:
            questions = agent_questions(game, net, progress=bar.update)
        with tqdm(total=min(args.refine_situations, len(questions)), desc=f"{step}: solving its questions",
                  unit="situation", disable=args.no_progress) as bar:
            asked = agent_situations(
                game, questions, args.refine_situations, iterations=args.iterations, rng=rng, progress=bar.update
            )
        data = merge(data, asked, rng)
        refined += len(asked.x)
        with tqdm(total=args.epochs * args.nets, desc=f"{step}: training", unit="epoch", disable=args.no_progress) as bar:
            params, figures = train(data, hidden=args.hidden, epochs=args.epochs, rng=rng, nets=args.nets, progress=bar.update)
    command = shlex.join(
        ["arena", "train-values", args.game, "--situations", str(args.situations), "--epochs", str(args.epochs),
         "--iterations", str(args.iterations), "--hidden", str(args.hidden), "--nets", str(args.nets),
         "--refine", str(args.refine), "--refine-situations", str(args.refine_situations), "--seed", str(args.seed),
         "-o", output.name]
    )
    extra = {"command": command, "situations": args.situations, "epochs": args.epochs, "seed": args.seed,
             "iterations": args.iterations, "nets": args.nets, "refine": args.refine,
             "refine_situations": args.refine_situations, **{k: round(v, 8) for k, v in figures.items()}}
    try:
        save_value_net(output, game, game.num_rounds - 1, list(params[0::2]), list(params[1::2]), extra)
    except OSError as error:
        return fail(PROG, f"cannot write {str(output)!r}: {error.strerror}", EXIT_FAILED)
    print(
        f"value net for {args.game}: {args.situations} situations and {refined} of the agent's questions"
        f" ({plural(args.refine, 'refinement round')}), {plural(args.epochs, 'epoch')};"
        f" validation MSE {figures['validation_mse']:.6f} (pot fractions²) vs constant predictor"
        f" {figures['constant_mse']:.6f}; {time.perf_counter() - started:.1f} s -> {output}"
    )
    return EXIT_OK
