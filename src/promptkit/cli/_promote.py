"""`promptkit overrides promote PROMPT --from candidate --to latest --dataset FILE --min-score X`:
evaluate both tags, then copy the candidate's overrides over the target only when the candidate
reaches the score and regresses no case beyond `--tolerance`.

On success the promoted file holds the candidate's text and, in its `[promotion]` table, the
evidence (scores, dataset hash, model, settings, the hash of every promoted entry), written in
one atomic replace; on refusal nothing is written, the regressed cases (or the entries changed
since the evaluation) are named and the exit status is 1. The dataset, evaluator and model
options are those of `promptkit eval`.
"""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit overrides promote` (described by `overrides`)."""
    from promptkit.cli._eval import add_evaluation_arguments
    from promptkit.cli._options import add_overrides_folder_argument

    parser.add_argument("prompt", metavar="PROMPT", help="package.module:attr or entry point")
    add_overrides_folder_argument(parser)
    parser.add_argument("--from", dest="from_tag", required=True, help="the candidate tag")
    parser.add_argument(
        "--to",
        dest="to_tag",
        help="the tag to replace (default: the app's, else [tool.promptkit] tag, else latest)",
    )
    parser.add_argument(
        "--min-score",
        type=float,
        required=True,
        help="the candidate's mean score must be at least this (0 to 1)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="how far a case's score may drop below the target's (default: 0)",
    )
    add_evaluation_arguments(parser)
    parser.set_defaults(handler=run_promote)


def run_promote(args: argparse.Namespace) -> int:
    """Evaluate both tags and promote or refuse; returns the exit status."""
    from promptkit.cli._eval import (
        evaluate_from_args,
        evaluation_config,
        evaluation_store,
        load_cli_prompt,
    )
    from promptkit.cli._eval_table import report_table
    from promptkit.errors import ConfigError, PromotionRefusedError
    from promptkit.evals import promote_overrides
    from promptkit.overrides import PromotableOverridesStore

    config = evaluation_config(args, tag=args.to_tag)
    args.to_tag = args.served_tag
    prompt = load_cli_prompt(args.prompt)
    store = evaluation_store(args, config)
    if not isinstance(store, PromotableOverridesStore):
        raise ConfigError(
            f"the app's overrides store ({type(store).__name__}) cannot promote; pass"
            " --overrides-dir DIR"
        )
    try:
        report = evaluate_from_args(args, prompt, (args.to_tag, args.from_tag), store)
        print(report_table(report))
        if report.interrupted:
            print("promptkit: interrupted; nothing was promoted", file=sys.stderr)
            return 130
        result = promote_overrides(
            prompt,
            store,
            report,
            from_tag=args.from_tag,
            to_tag=args.to_tag,
            min_score=args.min_score,
            tolerance=args.tolerance,
        )
    except PromotionRefusedError as refused:
        print(f"promptkit overrides promote: {refused}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"promptkit: error: {error}", file=sys.stderr)
        return 2
    print(
        f"promoted {args.from_tag} over {args.to_tag} (score {result.candidate_score:.3f}):"
        f" {result.overrides_location}, evidence in its [promotion] table"
    )
    return 0
