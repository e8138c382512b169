"""The ``relayish`` command line.

Every error is one message on stderr, never a traceback: ``FILE:LINE:COL: ...`` (with the
quoted line) where it has a place in a file, else ``relayish COMMAND: ...``. The exit status
is 2 when the command line itself is malformed (an unknown command or option, a bad option
value) and 1 for everything else that fails (an unreadable file, a parse, type or runtime
error, an argument that does not fit its parameter).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .errors import RelayError, RelayRuntimeError, Span


class CliError(Exception):
    """A failure the command reports as ``relayish COMMAND: message`` with exit ``status``."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (it prints the usage first, then the error)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _read(path: str) -> str:
    """The UTF-8 text of a file; an unreadable or undecodable one is a CliError or an error
    at the first bad byte."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise CliError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[:err.start].decode("utf-8")
        line, col = before.count("\n") + 1, len(before.rpartition("\n")[2]) + 1
        raise RelayError(f"not UTF-8 text (byte 0x{data[err.start]:02x}): save the file as UTF-8",
                         Span(path, line, col, source_line="")) from None


def _module(path: str) -> Any:
    from .parser import parse

    return parse(_read(path), filename=path)


def _entry(module: Any, name: str) -> Any:
    if name not in module:
        names = ", ".join(f"@{n}" for n in module.functions)
        have = f"it has: {names}; choose one with --entry" if names else "the file defines no globals"
        raise CliError(f"the module has no global @{name} ({have})")
    return module[name]


def _fmt(args: argparse.Namespace) -> int:
    """Print the canonical form; with ``check``, after type inference."""
    from typecheck import infer

    from .printer import astext

    module = _module(args.file)
    if args.command == "check":
        module = infer(module)
    sys.stdout.write(astext(module))
    return 0


def _run(args: argparse.Namespace) -> int:
    import numpy as np

    from interp import evaluate

    module = _module(args.file)
    params = _entry(module, args.entry).params
    if len(args.args) != len(params):
        names = ", ".join(f"%{p.name_hint}" for p in params)
        raise CliError(f"@{args.entry} takes {len(params)} arguments ({names}), given {len(args.args)}")
    values = [_argument(text, param, i, args.entry) for i, (text, param) in enumerate(zip(args.args, params), 1)]
    result = evaluate(module, args.entry, *values)
    with np.printoptions(threshold=50):
        print(_show(result))
    return 0


def _argument(text: str, param: Any, index: int, entry: str) -> Any:
    """A ``.npy`` file, or a literal converted to the parameter's declared dtype when it fits
    exactly (frontend.arguments: 2.5 is no Int, 99999999999 no int32)."""
    import ast

    import numpy as np

    from frontend.arguments import Misfit, to_argument

    from .printer import astext

    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except OSError as err:
            raise CliError(f"cannot read {text}: {err.strerror or err}") from None
        except (ValueError, EOFError) as err:
            raise CliError(f"{text} is not a .npy file of numbers: {err}") from None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise CliError(f"argument {text!r} is neither a .npy file nor a literal such as 3.0 or [1, 2]") from None
    ty = param.type_annotation
    try:
        return to_argument(value, ty)
    except Misfit as misfit:
        expected = f" of type {astext(ty)}" if ty is not None else ""
        raise RelayRuntimeError(f"argument {index} of @{entry}, {text}, for %{param.name_hint}{expected}: {misfit}",
                                param.span) from None


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        inner = ", ".join(_show(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _explain(args: argparse.Namespace) -> int:
    """Print what ``relayish.compile`` runs: the optimized IR and its fused kernels."""
    from jit import compile as jit_compile

    module = _module(args.file)
    _entry(module, args.entry)
    sys.stdout.write(jit_compile(module, args.entry, opt_level=args.opt_level).explain())
    return 0


def _difftest(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .testing.difftest import TIME_LIMIT, run_jobs
    from .testing.ix_programs import index_programs

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {args.out} is not a directory", status=2)
    others = list(args.backend or ["roundtrip"]) + [f"pass:{spec}" for spec in args.passes or []]
    try:
        report = run_jobs(args.examples, args.seed, others, out, wrong=args.wrong_arguments, jobs=args.jobs,
                          seconds=args.time_limit or TIME_LIMIT, generate=index_programs if args.index_expressions else None)
    except ValueError as err:
        raise CliError(str(err), status=2) from None
    except OSError as err:
        raise CliError(f"cannot write the failing program under {args.out}: {err.strerror or err}") from None
    print("\n".join(report.lines()))
    return 0 if report.failure is None else 1


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="relayish", description="A differentiable functional IR for tensor programs.")
    commands = parser.add_subparsers(dest="command", required=True)
    fmt = commands.add_parser("fmt", help="print a .rly file in canonical form (exit 1 on a parse error)")
    fmt.add_argument("file", help="the .rly file to read")
    fmt.set_defaults(run=_fmt)
    check = commands.add_parser("check", help="type-check a .rly file and print its typed IR (exit 1 on an error)")
    check.add_argument("file", help="the .rly file to read")
    check.set_defaults(run=_fmt)
    run = commands.add_parser("run", help="evaluate a global of a .rly file on arguments and print the result")
    run.add_argument("file", help="the .rly file to read")
    run.add_argument("args", nargs="*", help="each a .npy file or a literal (3.0, [1, 2]) converted to the parameter's "
                                             "dtype when it fits it exactly")
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
    diff.add_argument("--examples", type=_positive, default=200, help="how many programs to generate (default: 200)")
    diff.add_argument("--seed", type=int, default=0, help="the generator's seed (default: 0)")
    diff.add_argument("--backend", action="append", choices=["roundtrip", "jit", "cuda"],
                      help="a backend to compare with the evaluator (default: roundtrip, the typed text printed and parsed back; jit: relayish.compile; cuda: relayish.compile for target cuda, on a GPU or with NUMBA_ENABLE_CUDASIM=1)")
    diff.add_argument("--pass", dest="passes", action="append", metavar="MODULE:FUNCTION",
                      help="also compare the evaluator on the output of this IR-to-IR pass (repeatable)")
    diff.add_argument("--out", default=".", help="where a failing program is written (default: the current directory)")
    diff.add_argument("--wrong-arguments", type=_fraction, default=0.0, metavar="FRACTION",
                      help="call this fraction of the programs with an argument of another size or dtype than its "
                           "type: every backend must refuse it alike (default: 0)")
    diff.add_argument("--jobs", type=_positive, default=1,
                      help="split the programs over this many processes; job k uses seed SEED+k (default: 1)")
    diff.add_argument("--time-limit", type=_positive, metavar="SECONDS",
                      help="a program that takes longer in all backends together (compiling included) is a "
                           "failure (default: 600)")
    diff.add_argument("--index-expressions", action="store_true",
                      help="generate operators defined by index expressions (docs/index-expressions.md) instead: each "
                           "program defines one and returns its value and its derived gradient")
    diff.set_defaults(run=_difftest)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (0, 1 or 2, see the module's docstring)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as done:  # --help, or a usage error argparse has printed
        return done.code if isinstance(done.code, int) else 2
    where = f"relayish {args.command}"
    try:
        return args.run(args)
    except RelayError as err:
        print(err if err.span is not None else f"{where}: {err}", file=sys.stderr)
    except CliError as err:
        print(f"{where}: {err}", file=sys.stderr)
        return err.status
    except Exception as err:  # a bug in relayish: still one line, unless asked for the traceback
        from .tracebacks import filtering

        if not filtering():
            raise
        print(f"{where}: internal error, {type(err).__name__}: {err} (a bug in relayish: please report it; "
              "RELAYISH_TRACEBACK_FILTERING=off shows the traceback)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
