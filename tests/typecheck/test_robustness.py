"""Whatever module it is given, the checker either returns a typed module or raises
RelayTypeError: never another exception, never an internal error."""

from hypothesis import given, settings
from hypothesis import strategies as st

from relayish.testing.fuzz import check_module, check_typecheck, type_mutants
from relayish.testing.ir_strategies import modules

from .test_programs import lenet_source
from .test_rules import F, WELL_TYPED

CORPUS = [src.replace("$F", F) for _, src, _ in WELL_TYPED] + [lenet_source()]


@settings(max_examples=1500)
@given(type_mutants(st.sampled_from(CORPUS)))
def test_mutated_well_typed_programs_check_or_raise_type_errors(text):
    """Dimensions, dtypes, kinds, type variables, annotations, arguments or projections changed."""
    check_typecheck(text)


@settings(max_examples=500)
@given(modules())
def test_arbitrary_generated_modules_check_or_raise_type_errors(module):
    check_module(module)
