"""The notes on the starter workbook's header cells (render.workbook.template): each input
column's meaning, unit and default (docs/input.md#columns says the same), in the run's
language, units as the data has them (FLOP/s, bytes, seconds)."""

from __future__ import annotations

from pipeline.i18n import _


# Each input column's note: meaning, unit, default (docs/input.md#columns says the same), in
# the run's language; units as the data has them (FLOP/s, bytes, seconds).
def notes() -> dict[str, tuple[str, str, str]]:
    """Each input column's note: (meaning, unit, default), in the run's language."""
    return {
        "name": (_("The scenario's label, unique in the sheet."), _("text"), _("none (required)")),
        "op": (
            _(
                "matmul (BD,DF->BF), dot (N,N->), batched_matmul (BD,BDF->BF), custom (give flops "
                "and bytes), a two-operand einsum of single-letter dims (BSD,DF->BSF), a "
                "collective: all_gather, reduce_scatter, all_reduce, all_to_all, or a model's "
                "transformer step, serve (requests served) or train (a training step)."
            ),
            _("text"),
            _("none (required)"),
        ),
        "hardware": (
            _("A chip of the catalog, by name or alias, any case (the Hardware sheet lists them)."),
            _("text"),
            _("none (required)"),
        ),
        "dtype": (
            _("Dtype of both operands, the output and the compute."),
            "fp32, tf32, bf16, fp16, fp8, int8, int4, fp4, ...",
            "bf16",
        ),
        "x_dtype": (_("Dtype of X, the first operand."), _("a dtype"), "dtype"),
        "y_dtype": (_("Dtype of Y, the second operand."), _("a dtype"), "dtype"),
        "out_dtype": (_("Dtype of the result."), _("a dtype"), "dtype"),
        "compute_dtype": (
            _("The dtype whose peak FLOP/s applies."),
            _("a dtype"),
            _("the wider of X and Y"),
        ),
        "chips": (
            _(
                "Chips the op is split across; more than 1 needs shard; a collective needs 2 or "
                "more."
            ),
            _("chips (a whole number)"),
            "1",
        ),
        "shard": (
            _("The dim split across the chips (a dim of the op); blank for a collective."),
            _("a dim letter"),
            _("none"),
        ),
        "link": (
            _(
                "The interconnect that carries the communication: ici, nvlink, xgmi, roce, pcie or "
                "dcn."
            ),
            _("text"),
            _("the chip's default link"),
        ),
        "peak_flops": (_("This row's peak, of the compute dtype."), "FLOP/s", _("the catalog's")),
        "hbm_bandwidth": (_("This row's HBM bandwidth."), "bytes/s", _("the catalog's")),
        "hbm_capacity": (_("This row's HBM capacity."), "bytes", _("the catalog's")),
        "link_bandwidth": (_("This row's link bandwidth, one way."), "bytes/s", _("the catalog's")),
        "compute_efficiency": (
            _("The fraction 0 < e <= 1 of the peak FLOP/s reached."),
            _("a fraction"),
            _("the chip's, else 1"),
        ),
        "hbm_efficiency": (
            _("The fraction 0 < e <= 1 of the HBM bandwidth reached."),
            _("a fraction"),
            _("the chip's, else 1"),
        ),
        "network_efficiency": (
            _("The fraction 0 < e <= 1 of the link bandwidth reached."),
            _("a fraction"),
            _("the chip's, else 1"),
        ),
        "flops": (_("For custom: the op's total FLOPs, on one chip."), "FLOP", _("none")),
        "bytes": (
            _(
                "For custom: the op's total bytes, on one chip. For a collective: V, the bytes of "
                "the whole array before it is split (a whole number or a sweep)."
            ),
            "bytes",
            _("none"),
        ),
        "measured_seconds": (
            _("A measured time, compared with the prediction."),
            "seconds",
            _("none"),
        ),
        "model": (
            _(
                "For transformer, serve and train: a model of the catalog (pipeline models), its "
                "shape; the row's own D, F, N, K, H, L, V win."
            ),
            _("text"),
            _("none"),
        ),
        "kv_dtype": (
            _("For transformer and serve: the KV cache's dtype."),
            "dtype",
            _("the activations'"),
        ),
        "count": (
            _(
                "How many identical ops the row stands for, one after another (a layer's op x its "
                "layers): n x the FLOPs, bytes and time; one op's intensity and bound."
            ),
            _("ops"),
            "1",
        ),
        "group": (
            _(
                "Rows with the same group are summed into one total row named after it (per point "
                "of their sweep): rows one after another, the same sweep, one chip and precision."
            ),
            _("text"),
            _("none"),
        ),
        "notes": (_("Free text, carried to every output."), _("text"), _("none")),
        **serve_notes(),
        **train_notes(),
    }


def serve_notes() -> dict[str, tuple[str, str, str]]:
    """A serve row's own columns' notes (docs/input.md#serving): (meaning, unit, default)."""
    return {
        "isl": (
            _("For serve: the prompt (input) tokens per request, 1 or more."),
            _("tokens (a whole number)"),
            _("none (required for serve)"),
        ),
        "osl": (
            _("For serve: the output tokens per request, 1 or more."),
            _("tokens (a whole number)"),
            _("none (required for serve)"),
        ),
        "ttft_target": (
            _("For serve: the time to the first token to meet, above 0."),
            "seconds",
            _("none"),
        ),
        "tpot_target": (
            _(
                "For serve: the time per output token to meet, above 0; with B blank, B is the "
                "largest batch that meets it and fits."
            ),
            "seconds",
            _("none"),
        ),
        "draft_tokens": (
            _(
                "For serve: speculative decoding, the k draft tokens each decode step verifies "
                "(1 or more); needs acceptance."
            ),
            _("tokens (a whole number)"),
            _("none (no speculation)"),
        ),
        "acceptance": (
            _("For serve, with draft_tokens: the chance a draft token is accepted, 0 < a <= 1."),
            _("a fraction"),
            _("none"),
        ),
        "draft_model": (
            _("For serve: the draft model (a catalog model) whose k decode steps each step adds."),
            _("text"),
            _("none: drafts that cost nothing"),
        ),
    }


def train_notes() -> dict[str, tuple[str, str, str]]:
    """A train row's own columns' notes (docs/input.md#training-steps): (meaning, unit,
    default)."""
    return {
        "tokens": (
            _("For train: the global batch, tokens a step (every sequence's tokens together)."),
            _("tokens"),
            _("none (required for train)"),
        ),
        "train_tokens": (
            _("For train: the whole run's tokens, for days."),
            _("tokens"),
            _("none: no days"),
        ),
        "parallel": (
            _(
                "For train: each strategy's degree, name=degree: dp, fsdp, tp, pp, ep; their "
                "product must be chips."
            ),
            _("text"),
            _("fsdp= every chip"),
        ),
        "mesh_axes": (
            _(
                "For train: the torus axes each strategy's collectives use on a ring link (TPU "
                "ICI), e.g. fsdp=3 tp=1."
            ),
            _("text"),
            _("1 each"),
        ),
        "remat": (
            _("For train: none, block or save-matmuls (what the backward pass recomputes)."),
            _("text"),
            "save-matmuls",
        ),
        "optimizer": (
            _("For train: adam or adamw (two fp32 moments), or sgd (none)."),
            _("text"),
            "adam",
        ),
        "microbatches": (
            _(
                "For train, required with pp > 1: the pieces a step's batch is split into; the "
                "bubble is (pp - 1) / microbatches."
            ),
            _("microbatches (a whole number)"),
            "1",
        ),
    }


def dim_note(dim: str) -> tuple[str, str, str]:
    """A dim column's note: (meaning, unit, default), in the run's language."""
    return (
        _(
            "The size of dim {dim}: a whole number, or a sweep: 128|256|512 (a list), 1..512 "
            "(every whole number), 1..4096*2 (doubling). Blank when the op does not use it.",
            dim=dim,
        ),
        _("elements"),
        _("none"),
    )


def note(column: str) -> str:
    """The note on a header cell: what the column means, its unit and its default."""
    meaning, unit, default = notes().get(column) or dim_note(column)
    return _(
        "{column}: {meaning}\nUnit: {unit}\nDefault: {default}",
        column=column,
        meaning=meaning,
        unit=unit,
        default=default,
    )
