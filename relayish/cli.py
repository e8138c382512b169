"""The ``relayish`` command line."""

from __future__ import annotations

import argparse
import sys

from .errors import RelayError


def _fmt(args: argparse.Namespace) -> int:
    """Print the canonical form; with ``typed``, after type inference."""
    from typecheck import infer

    from .parser import parse
    from .printer import astext

    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        print(f"relayish {args.command}: cannot read {args.file}: {err.strerror}", file=sys.stderr)
        return 1
    try:
        module = parse(text, filename=args.file)
        if args.command == "check":
            module = infer(module)
    except RelayError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    sys.stdout.write(astext(module))
    return 0


def _run(args: argparse.Namespace) -> int:
    import numpy as np

    from interp import evaluate

    from .parser import parse

    try:
        with open(args.file, encoding="utf-8") as handle:
            module = parse(handle.read(), filename=args.file)
        params = module[args.entry].params if args.entry in module else []
        values = [_argument(text, param) for text, param in zip(args.args, params)]
        values += [_argument(text, None) for text in args.args[len(params):]]
        result = evaluate(module, args.entry, *values)
    except OSError as err:
        print(f"relayish run: cannot read {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    except (RelayError, ValueError, SyntaxError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    with np.printoptions(threshold=50):
        print(_show(result))
    return 0


def _argument(text: str, param):
    """A ``.npy`` file, or a literal converted to the parameter's declared dtype."""
    import ast

    import numpy as np

    from .types import BaseType, TensorType

    if text.endswith(".npy"):
        return np.load(text, allow_pickle=False)
    try:
        value = np.asarray(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        raise ValueError(f"argument {text!r} is neither a .npy file nor a literal such as 3.0 or [1, 2]") from None
    ty = getattr(param, "type_annotation", None)
    if isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType):
        return value.astype(ty.dtype.to_numpy())
    return value.astype({"f": np.float32, "i": np.int32}.get(value.dtype.kind, value.dtype))


def _show(value) -> str:
    if isinstance(value, tuple):
        inner = ", ".join(_show(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _explain(args: argparse.Namespace) -> int:
    """Print what ``relayish.compile`` runs: the optimized IR and its fused kernels."""
    from jit import compile as jit_compile

    from .parser import parse

    try:
        with open(args.file, encoding="utf-8") as handle:
            module = parse(handle.read(), filename=args.file)
        compiled = jit_compile(module, args.entry, opt_level=args.opt_level)
    except OSError as err:
        print(f"relayish explain: cannot read {args.file}: {err.strerror}", file=sys.stderr)
        return 1
    except (RelayError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    sys.stdout.write(compiled.explain())
    return 0


def _difftest(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .testing.difftest import run

    others = list(args.backend or ["roundtrip"]) + [f"pass:{spec}" for spec in args.passes or []]
    try:
        report = run(args.examples, args.seed, others, Path(args.out))
    except ValueError as err:
        print(f"relayish difftest: {err}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0 if report.failure is None else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relayish", description="A differentiable functional IR for tensor programs.")
    commands = parser.add_subparsers(dest="command", required=True)
    fmt = commands.add_parser("fmt", help="print a .rly file in canonical form (exit 1 on a parse error)")
    fmt.add_argument("file", help="the .rly file to read")
    fmt.set_defaults(run=_fmt)
    check = commands.add_parser("check", help="type-check a .rly file and print its typed IR (exit 1 on an error)")
    check.add_argument("file", help="the .rly file to read")
    check.set_defaults(run=_fmt)
    run = commands.add_parser("run", help="evaluate a global of a .rly file on arguments and print the result")
    run.add_argument("file", help="the .rly file to read")
    run.add_argument("args", nargs="*", help="each a .npy file or a literal (3.0, [1, 2]) cast to the parameter's dtype")
    run.add_argument("--entry", default="main", help="the global to run (default: main)")
    run.set_defaults(run=_run)
    explain = commands.add_parser("explain", help="print a global's optimized IR and its fused kernels (what the JIT runs)")
    explain.add_argument("file", help="the .rly file to read")
    explain.add_argument("--entry", default="main", help="the global to compile (default: main)")
    explain.add_argument("--opt-level", type=int, choices=[0, 1, 2, 3], default=3, help="the optimizer level (default: 3)")
    explain.set_defaults(run=_explain)
    diff = commands.add_parser(
        "difftest",
        help="run generated well-typed programs in the evaluator and other backends and compare the results",
    )
    diff.add_argument("--examples", type=int, default=200, help="how many programs to generate (default: 200)")
    diff.add_argument("--seed", type=int, default=0, help="the generator's seed (default: 0)")
    diff.add_argument("--backend", action="append", choices=["roundtrip", "jit", "cuda"],
                      help="a backend to compare with the evaluator (default: roundtrip, the typed text printed and parsed back; jit: relayish.compile; cuda: relayish.compile for target cuda, on a GPU or with NUMBA_ENABLE_CUDASIM=1)")
    diff.add_argument("--pass", dest="passes", action="append", metavar="MODULE:FUNCTION",
                      help="also compare the evaluator on the output of this IR-to-IR pass (repeatable)")
    diff.add_argument("--out", default=".", help="where a failing program is written (default: the current directory)")
    diff.set_defaults(run=_difftest)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
