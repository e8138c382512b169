"""The type checker on mutated typed programs: ``infer`` returns a typed module or raises
RelayTypeError (KindError included), or the mutant no longer parses (ParseError); never an
internal error, another exception or a hang; whatever parses or checks also prints.

The mutants (``relayish.testing.fuzz.typecheck_inputs``) are real typed programs (from
tests/interp/programs, examples/ and docs/) and generated well-typed ones, with dimensions,
dtypes, kinds, type variables, annotations, arguments or projections changed. Under
RELAYISH_HYPOTHESIS=heavy the test runs the issue's 10,000 mutants.
"""

from __future__ import annotations

from hypothesis import given, settings

from relayish.testing.fuzz import HANG_SECONDS, TYPECHECK_MUTANTS, check_typecheck, main, typecheck_inputs
from relayish.testing.ir_strategies import time_limit

from .test_fuzz import examples


@settings(max_examples=examples(400, TYPECHECK_MUTANTS))
@given(typecheck_inputs())
def test_mutated_typed_programs_check_or_raise_type_errors(text):
    with time_limit(HANG_SECONDS, "checking a mutated program", cpu=True):
        check_typecheck(text)


def test_the_fuzz_command_prints_its_figures(capsys):
    assert main(["--parser", "30", "--typecheck", "30", "--seed", "2"]) == 0
    parser, typecheck = capsys.readouterr().out.splitlines()
    assert parser.startswith("Parser fuzz: 30 inputs (")
    assert "; 0 exceptions other than ParseError; 0 hangs over 5 s of CPU time (" in parser
    assert typecheck.startswith("Type-checker fuzz: 30 inputs (30 typed-program mutant); outcomes: ")
    assert "; 0 internal errors, 0 other exceptions; 0 hangs over 5 s of CPU time (" in typecheck
