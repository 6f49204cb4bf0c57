"""Op signatures: named ops and einsum specs -> operands, output, contracted and batch dims."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.model.dtypes import DTYPE_COLUMNS

NAMED_OPS: dict[str, str] = {
    "matmul": "BD,DF->BF",
    "dot": "N,N->",
    "batched_matmul": "BD,BDF->BF",
}
CUSTOM = "custom"
# collectives as rows (docs/model.md#collectives): `bytes` is the whole array's V, no einsum
DIM = re.compile(r"^[A-Z]$")  # a dim column: one ASCII capital letter (not 'À')
# the columns whose cells may list values too (`h100|h200`, `bf16|fp8`, `1|2|4|8`): the fleet
# axes of a series, swept before its dims (docs/input.md#sweeping-the-fleet); model and
# kv_dtype: a transformer step's
FLEET = ("model", "hardware", "dtype", *DTYPE_COLUMNS, "kv_dtype", "chips")


def is_dim(column: object) -> bool:
    """Whether a column name is a dim's (B, D, F, ... as docs/input.md defines them)."""
    return isinstance(column, str) and DIM.match(column) is not None


COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
TRANSFORMER = "transformer"  # one step of a decoder-only model (model.transformer)
SERVE = "serve"  # requests served by a decoder-only model: its prefill and decode (model.serve)
TRAIN = "train"  # a training step of a decoder-only model, one row (model.train)

# '→' too: spreadsheets' autocorrect turns a typed '->' into it (LibreOffice does)
_EINSUM = re.compile(r"^\s*([A-Za-z]*)\s*,\s*([A-Za-z]*)\s*(?:->|→)\s*([A-Za-z]*)\s*$")


@dataclass(frozen=True)
class OpSignature:
    """What an op reads, writes and contracts. `einsum` is '' for custom ops and collectives."""

    op: str
    einsum: str
    x: str = ""
    y: str = ""
    out: str = ""

    @property
    def is_custom(self) -> bool:
        return self.op == CUSTOM

    @property
    def is_collective(self) -> bool:
        return self.op in COLLECTIVES

    @property
    def has_einsum(self) -> bool:
        return self.einsum != ""

    @property
    def dims(self) -> str:
        """Every dim of the einsum, in order of first appearance."""
        return "".join(dict.fromkeys(self.x + self.y + self.out))

    @property
    def contracted(self) -> str:
        """Dims in the operands but not in the output (book: contracting dims)."""
        return "".join(d for d in self.dims if d not in self.out)

    @property
    def batch(self) -> str:
        """Dims of X that are in the output but not in Y (docs/model.md#critical-batch)."""
        return "".join(d for d in self.x if d in self.out and d not in self.y)


class OpError(ValueError):
    """An op cell that is not a known op or a valid two-operand einsum."""


@lru_cache(maxsize=4096)
def parse_op(text: str) -> OpSignature:
    """Parse an `op` cell: a named op, `custom`, a collective, or an einsum like BSD,DF->BSF."""
    key = text.strip()
    low = key.lower()
    squashed = re.sub(r"[-_\s]", "", low)  # AllGather, all-gather, all_gather
    for name in (CUSTOM, *COLLECTIVES):
        if squashed == name.replace("_", ""):
            return OpSignature(op=name, einsum="")
    if squashed == TRANSFORMER:  # a model's step: B sequences, T new tokens, S positions
        return OpSignature(op=TRANSFORMER, einsum="", x="BTS")
    if squashed == SERVE:  # its batch B is optional, its steps' T and S come from isl, osl
        return OpSignature(op=SERVE, einsum="")
    if squashed == TRAIN:  # its dims come from `model`, its batch from `tokens`
        return OpSignature(op=TRAIN, einsum="")
    if low in NAMED_OPS:
        return _from_einsum(low, NAMED_OPS[low])
    if "->" not in key and "," not in key:
        raise OpError(f"unknown op '{key}'")
    return _from_einsum(None, key)


def _from_einsum(name: str | None, spec: str) -> OpSignature:
    m = _EINSUM.match(spec)
    if not m:
        raise OpError(
            f"op '{spec}' is not a two-operand einsum of single-letter dims like 'BD,DF->BF'"
        )
    x, y, out = (g.upper() for g in m.groups())
    if not x or not y:
        raise OpError(f"einsum '{spec}' needs two operands with at least one dim each")
    for part, label in ((x, "first operand"), (y, "second operand"), (out, "output")):
        if len(set(part)) != len(part):
            raise OpError(f"einsum '{spec}' repeats a dim in its {label} (not supported)")
    missing = [d for d in out if d not in x + y]
    if missing:
        raise OpError(f"einsum '{spec}' has output dim(s) {''.join(missing)} that no operand has")
    canonical = f"{x},{y}->{out}"
    return OpSignature(op=name or canonical, einsum=canonical, x=x, y=y, out=out)


def known_op_names() -> list[str]:
    """Named ops, for did-you-mean messages."""
    return [*NAMED_OPS, CUSTOM, *COLLECTIVES, TRANSFORMER, SERVE, TRAIN]
