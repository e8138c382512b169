"""The ``relayish`` command line."""

from __future__ import annotations

import argparse
import sys

from .errors import ParseError


def _fmt(args: argparse.Namespace) -> int:
    from .parser import parse
    from .printer import astext

    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        print(f"relayish fmt: cannot read {args.file}: {err.strerror}", file=sys.stderr)
        return 1
    try:
        module = parse(text, filename=args.file)
    except ParseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    sys.stdout.write(astext(module))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relayish", description="A differentiable functional IR for tensor programs.")
    commands = parser.add_subparsers(dest="command", required=True)
    fmt = commands.add_parser("fmt", help="print a .rly file in canonical form (exit 1 on a parse error)")
    fmt.add_argument("file", help="the .rly file to read")
    fmt.set_defaults(run=_fmt)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
