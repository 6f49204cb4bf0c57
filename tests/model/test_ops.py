"""Op signatures."""

from __future__ import annotations

import pytest

from pipeline.model.ops import OpError, parse_op


@pytest.mark.parametrize(
    ("op", "einsum", "contracted", "batch"),
    [
        ("matmul", "BD,DF->BF", "D", "B"),
        ("MatMul", "BD,DF->BF", "D", "B"),
        ("dot", "N,N->", "N", ""),
        ("batched_matmul", "BD,BDF->BF", "D", ""),
        ("bsd,df->bsf", "BSD,DF->BSF", "D", "BS"),
        (" BD , DF -> BF ", "BD,DF->BF", "D", "B"),
        ("BD,BF->BDF", "BD,BF->BDF", "", "D"),
    ],
)
def test_signatures(op, einsum, contracted, batch):
    sig = parse_op(op)
    assert (sig.einsum, sig.contracted, sig.batch) == (einsum, contracted, batch)


def test_custom():
    assert parse_op("Custom").is_custom


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ("conv", "unknown op 'conv'"),
        ("BD,DF", "op 'BD,DF' is not a two-operand einsum of single-letter dims like 'BD,DF->BF'"),
        ("BB,BF->BF", "einsum 'BB,BF->BF' repeats a dim in its first operand (not supported)"),
        (",DF->F", "einsum ',DF->F' needs two operands with at least one dim each"),
        (
            "B1,DF->BF",
            "op 'B1,DF->BF' is not a two-operand einsum of single-letter dims like 'BD,DF->BF'",
        ),
    ],
)
def test_bad_ops(op, message):
    with pytest.raises(OpError) as err:
        parse_op(op)
    assert str(err.value) == message


def test_an_autocorrected_arrow_is_an_arrow():
    """LibreOffice's autocorrect turns a typed '->' into '→' in a spreadsheet cell."""
    from pipeline.model.ops import parse_op

    assert parse_op("BSD,DF→BSF") == parse_op("BSD,DF->BSF")
    assert parse_op("BSD,DF→BSF").einsum == "BSD,DF->BSF"
