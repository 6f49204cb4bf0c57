"""A training step's communication per parallel strategy (docs/model.md#training; book
"How to Parallelize a Transformer for Training", its table "Comms per layer", and "How to
Think About GPUs", "Rooflines for LLM Scaling on GPUs"), in closed form over whole columns.

Each strategy's collectives run over its degree of chips. The chips are laid out innermost
first in LAYOUT order (tp, ep, fsdp, dp, pp): a strategy whose groups fit in the chip's
link's reach (chips inside its inner strategies times its degree) runs on that link; past
it, a collective is two levels (book GPUs, "Reductions when array is sharded over a separate
axis"): `d_in` of its chips share a link domain and the rest, `d_out` domains, exchange V /
d_in bytes a chip over the data-center network (dcn), the slower level setting the time. On
a ring link a strategy over M torus axes (`mesh_axes`) has M times the bandwidth (book:
"M_X ... the number of mesh axes", 2,550 / M_X on v5p)."""

from __future__ import annotations

import numpy as np

STRATEGIES = ("dp", "fsdp", "tp", "pp", "ep")  # the `parallel` cell's names
LAYOUT = ("tp", "ep", "fsdp", "dp", "pp")  # innermost first: tp within a node, pp outermost
# per strategy: the collective that dominates it (a KINDS name; pp sends point to point)
COLLECTIVE_OF = {"dp": "all_reduce", "fsdp": "all_gather", "tp": "all_gather",
                 "ep": "all_to_all", "pp": ""}  # fmt: skip
PASSES = ("forward", "backward")


def spans(degrees: dict[str, np.ndarray], reach: np.ndarray) -> dict[str, tuple]:
    """Per strategy, (d_in, d_out): how many of its chips share the link's domain and how
    many domains it spans (d_in x d_out = its degree); `reach` NaN: the link reaches all."""
    inner = np.ones_like(reach)
    out = {}
    for s in LAYOUT:
        d = degrees[s]
        room = np.where(np.isnan(reach), np.inf, np.floor(reach / inner))
        d_in = np.clip(np.minimum(d, room), 1.0, None)
        out[s] = (d_in, np.ceil(d / d_in))
        inner = inner * d
    return out


def per_byte(chips, bandwidth, ring, phases, all_to_all=False) -> np.ndarray:
    """Seconds a byte of V costs a collective over `chips` (0 on one chip): collective_time's
    bandwidth term without its latency floor (ring V / (2 W), switch V (N - 1) / (N W), an
    AllToAll a quarter of that on a ring and 1 / N through a switch), x its phases."""
    with np.errstate(divide="ignore", invalid="ignore"):
        switch = (chips - 1) / (chips * bandwidth)
        if all_to_all:
            switch = switch / chips
        t = np.where(ring, (0.25 if all_to_all else 1.0) / (2.0 * bandwidth), switch)
    return np.where(chips > 1, phases * t, 0.0)


def floor(chips, latency, phases) -> np.ndarray:
    """A collective's latency floor (hop latency x chips / 2 a phase; 0 on one chip)."""
    return np.where(chips > 1, phases * latency * chips / 2.0, 0.0)


class Levels:
    """The two levels a strategy's collectives cross: its link (bandwidth x its mesh axes on
    a ring) and the dcn; `cost(V, phases)` the seconds of one collective of V bytes, and
    `slope(phases)` its seconds per byte without latency (the book's bandwidth roofline)."""

    def __init__(self, d_in, d_out, link: dict, dcn: dict, axes):
        self.d_in, self.d_out = d_in, d_out
        ring = link["ring"]
        self.link = {**link, "bandwidth": link["bandwidth"] * np.where(ring, axes, 1.0)}
        self.dcn = dcn

    def slope(self, phases: float, all_to_all: bool = False) -> np.ndarray:
        k_in = per_byte(self.d_in, self.link["bandwidth"], self.link["ring"], phases, all_to_all)
        k_out = per_byte(self.d_out, self.dcn["bandwidth"], self.dcn["ring"], phases, all_to_all)
        return np.fmax(k_in, k_out / self.d_in)  # fmax: a NaN level (no such link) is not used

    def cost(self, volume, phases: float, all_to_all: bool = False) -> np.ndarray:
        link, dcn = self.link, self.dcn
        k_in = per_byte(self.d_in, link["bandwidth"], link["ring"], phases, all_to_all)
        k_out = per_byte(self.d_out, dcn["bandwidth"], dcn["ring"], phases, all_to_all)
        inside = np.fmax(volume * k_in, floor(self.d_in, link["latency"], phases))
        across = np.fmax(volume / self.d_in * k_out, floor(self.d_out, dcn["latency"], phases))
        return np.fmax(inside, across)


def step_comms(size: dict, degrees: dict, axes: dict, link: dict, dcn: dict, reach) -> dict:
    """Per strategy and pass, (fixed, per_token, with_latency): the bandwidth seconds of its
    collectives split into the part fixed by the weights and the part per token of the step
    (both without latency: the book's roofline, for the compute-bound token batch), and the
    seconds at the row's own tokens with every collective's latency floor.

    `size` holds per row: `weights` (bytes of one chip's pipeline stage and tensor shard, the
    array FSDP gathers), `layers` (a stage's layers), `tokens`, `width` (D), `act` (an
    activation's bytes), `moe_k` (experts a token goes to; 0: dense), `microbatches`.
    Per layer and pass (book, "Comms per layer", forward + backward):
      fsdp  AllGather of the layer's weights forward; AllGather and ReduceScatter backward
      dp    AllReduce of the gradients (already reduce-scattered over fsdp) backward
      tp    AllGather and ReduceScatter of [tokens, D] around attention and the MLP, each pass
      ep    AllToAll of [tokens, k, D] to the experts and back, each pass (MoE layers)
      pp    a stage's activations to the next stage forward, their gradients back: one
            send a pass over one link (V / one-way bandwidth)."""
    where = spans(degrees, reach)
    layers, tokens = size["layers"], size["tokens"]
    data = degrees["dp"] * degrees["fsdp"] * degrees["ep"]  # chips holding distinct tokens
    out = {}
    for s in STRATEGIES:
        on = degrees[s] > 1
        if not on.any():  # no row uses it: nothing to time
            none = np.zeros(len(on))
            out[s] = {name: (none, none, none) for name in PASSES}
            continue
        d_in, d_out = where[s]
        lv = Levels(d_in, d_out, link, dcn, axes[s])
        # (bytes fixed by the weights, bytes per token, calls per layer forward, backward,
        # phases, an AllToAll)
        if s == "fsdp":
            calls = (size["weights"] / layers, 0.0, 1, 2, 1.0, False)
        elif s == "dp":
            calls = (size["weights"] / degrees["fsdp"] / layers, 0.0, 0, 1, 2.0, False)
        elif s == "tp":
            calls = (0.0, size["act"] * size["width"] / data, 4, 4, 1.0, False)
        elif s == "ep":
            group = degrees["dp"] * degrees["fsdp"]  # an expert group's tokens, k copies each
            calls = (0.0, size["act"] * size["width"] * size["moe_k"] / group, 2, 2, 1.0, True)
            on = on & (size["moe_k"] > 0)
        else:
            out[s] = _sends(size, degrees, d_in, link, dcn, on, data)
            continue
        out[s] = _collectives(calls, lv, layers, tokens, on)
    return out


def _collectives(calls: tuple, lv: Levels, layers, tokens, on) -> dict:
    """{pass: (fixed, per_token, with_latency)} of one strategy's collectives."""
    fixed_v, token_v, forward, backward, phases, a2a = calls
    slope = lv.slope(phases, a2a)
    one = lv.cost(fixed_v + token_v * tokens, phases, a2a)
    result = {}
    for name, count in zip(PASSES, (forward, backward), strict=True):
        n = count * layers
        terms = (n * fixed_v * slope, n * token_v * slope, n * one)
        result[name] = tuple(np.where(on, x, 0.0) for x in terms)
    return result


def _sends(size, degrees, d_in, link, dcn, on, data) -> dict:
    """Pipeline stages' point-to-point sends: a chip's share of the stage's activations, once
    a pass, over the link when neighbouring stages share its domain, else over the dcn."""
    same = d_in > 1
    bandwidth = np.where(same, link["bandwidth"], dcn["bandwidth"])
    latency = np.where(same, link["latency"], dcn["latency"])
    v = size["act"] * size["width"] / (data * degrees["tp"])
    per_token = v / bandwidth
    timed = v * size["tokens"] / bandwidth + size["microbatches"] * latency
    both = tuple(np.where(on, np.nan_to_num(x), 0.0) for x in (0.0 * v, per_token, timed))
    return {name: both for name in PASSES}


def compute_bound_tokens(comms: dict, math_per_token: dict) -> np.ndarray:
    """The smallest global tokens per step at which every strategy's bandwidth time is under
    the compute of its pass (book: T_math > T_comms, each pass on its own): the largest of
    fixed / (math per token - comm per token); inf where a strategy's per-token comm is at
    least the math (tensor parallelism too wide: no batch makes it compute-bound)."""
    need = None
    for per_pass in comms.values():
        for name, (fixed, per_token, _) in per_pass.items():
            margin = math_per_token[name] - per_token
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(margin > 0, fixed / margin, np.inf)
            t = np.where((fixed == 0) & (per_token == 0), 0.0, t)
            need = t if need is None else np.maximum(need, t)
    return need


def mfu(model_flops, chips, peak, seconds):
    """Model FLOPs utilization: 6 x params x tokens over what the chips could do in that time
    (book "Transformer Math", Q7: DeepSeek-V3's 21.7 %)."""
    return model_flops / (chips * peak * seconds)


def mixed_fsdp_tp(tokens, width_ff, chips, alpha, axes_fsdp=1.0, axes_tp=1.0):
    """The book's best FSDP x tensor parallel split and its compute-bound token batch a chip:
    X_opt = sqrt(B / F x M_X / M_Y x N) and B / N > alpha^2 / (M_X M_Y F) (book "Combining
    FSDP and Tensor Parallelism"; LLaMA-2 13B on 4096 v5p: 1333 and 235)."""
    best = np.sqrt(tokens / width_ff * axes_fsdp / axes_tp * chips)
    return best, alpha**2 / (axes_fsdp * axes_tp * width_ff)
