"""`harness sample`: continue a prompt with a trained run's last checkpoint and tokenizer."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add `harness sample` to the CLI."""
    parser = subparsers.add_parser(
        "sample",
        help="generate text from a trained run",
        description="Load RUN_ID's last checkpoint and tokenizer and print the prompt's continuation.",
    )
    parser.add_argument("run_id", metavar="RUN_ID", help="a run id (printed by `harness run`; see `harness db runs`)")
    parser.add_argument("--prompt", required=True, help="the text to continue")
    parser.add_argument("--max-new-tokens", type=int, default=64, metavar="N", help="tokens to generate (default: 64)")
    parser.add_argument(
        "--temperature", type=float, default=1.0, metavar="T",
        help="0 decodes greedily, refusing --top-k and --top-p (default: 1.0)"
    )
    parser.add_argument("--top-k", type=int, metavar="K", help="sample only among the K most likely tokens")
    parser.add_argument("--top-p", type=float, default=1.0, metavar="P", help="nucleus sampling mass (default: 1, off)")
    parser.add_argument(
        "--beams", type=int, default=1, metavar="N",
        help="beam search with N beams (N > 1 refuses --temperature, --top-k and --top-p)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="sampling seed (default: 0)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.set_defaults(handler=run)


def strategy(args: argparse.Namespace) -> str:
    """beam with --beams > 1, greedy at temperature 0, else sampling."""
    if args.beams > 1:
        return "beam"
    return "greedy" if args.temperature == 0 else "sample"


def check_options(args: argparse.Namespace) -> None:
    """Refuse options the chosen decoding would silently ignore (ConfigError)."""
    from errors import ConfigError

    sampling = [flag for flag, used in (("--top-k", args.top_k is not None), ("--top-p", args.top_p != 1.0)) if used]
    if args.beams > 1 and (sampling or args.temperature != 1.0):
        ignored = ", ".join([*sampling, *(["--temperature"] if args.temperature != 1.0 else [])])
        raise ConfigError(f"--beams={args.beams} runs beam search, which does not sample: drop {ignored}, or use "
                          "--beams 1.")
    if args.temperature == 0 and sampling:
        raise ConfigError(f"--temperature=0 decodes greedily, which ignores {', '.join(sampling)}: drop it or set a "
                          "temperature > 0.")


def run(args: argparse.Namespace) -> int:
    """Print the prompt followed by its generated continuation."""
    import torch

    import db
    from cli.run_checks import check_valid_run_id
    from errors import ConfigError
    from harness.data.tokenizer import EOS
    from harness.sample import generate
    from harness.train.load import load_trained

    check_valid_run_id(args.run_id, "RUN_ID")
    check_options(args)
    model, tokenizer = load_trained(db.resolve_results_dir(args.results), args.run_id)
    if not all(torch.isfinite(p).all() for p in model.parameters()):
        raise ConfigError(f"run {args.run_id!r} has non-finite weights in its last checkpoint (it diverged): nothing "
                          "to sample.")
    prompt_ids = tokenizer.encode(args.prompt).ids
    if not prompt_ids:
        raise ConfigError("--prompt is empty: give some text to continue.")
    with torch.no_grad():
        out = generate(
            model, torch.tensor(prompt_ids), args.max_new_tokens, strategy=strategy(args),
            temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, num_beams=args.beams,
            generator=torch.Generator().manual_seed(args.seed), eos_id=tokenizer.token_to_id(EOS),
        )
    print(tokenizer.decode(out.tolist()))
    return 0
