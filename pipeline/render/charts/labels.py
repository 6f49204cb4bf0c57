"""Where to put point labels on a roofline chart so that they stay readable.

Candidate positions around each point are scored: overlaps with other labels, leader lines
that cross each other or run along a roof line, and labels nearer another point than their own
cost; several placement orders are tried and the cheapest layout wins.
"""

from __future__ import annotations

import re

import numpy as np

from pipeline.errors import printable
from pipeline.i18n import _, current_lang
from pipeline.render import format as fmt


def chart_text(value: object, limit: int = 48) -> str:
    """Untrusted text for a chart: one line, bounded, '$' escaped so it is never mathtext,
    a bidi control (or another invisible control) written as the terminal writes it
    (errors.printable: `\\u202e`), and a character the chart fonts have no glyph for (an
    emoji; Hangul in an English chart) shown as a box, not left to matplotlib's missing-glyph
    warnings."""
    text = printable(re.sub(r"[\x00-\x1f\x7f]+", " ", str(value)).strip())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text.isascii():
        from pipeline.render.charts.fonts import font_glyphs

        glyphs = font_glyphs(current_lang())
        text = "".join(ch if ord(ch) in glyphs else MISSING_GLYPH for ch in text)
    return text.replace("$", r"\$")


MISSING_GLYPH = "\u25a1"  # WHITE SQUARE, which the chart font has


def fit_text(fig, head: str, tail: str, width: float, fontsize: float) -> str:
    """`head + tail` in at most `width` pixels of text on `fig`: `head` cut with an ellipsis
    first (a legend entry keeps what it says of its line), and `tail` too when even that is
    too wide. Widths are measured, so the result is what the figure draws."""
    renderer = fig.canvas.get_renderer()

    def fits(text: str) -> bool:
        probe = fig.text(0, 0, text, fontsize=fontsize)
        wide = probe.get_window_extent(renderer).width
        probe.remove()
        return wide <= width

    def cut(text: str, rest: str) -> str:
        """The longest `text[:n] + '…' + rest` that fits (binary search: width grows with n);
        a cut never leaves half of the '\\$' escape."""
        lo, hi = 0, len(text) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(text[:mid].rstrip("\\") + "…" + rest):
                lo = mid
            else:
                hi = mid - 1
        return text[:lo].rstrip("\\") + "…" + rest

    if fits(head + tail):
        return head + tail
    if head and fits("…" + tail):
        return cut(head, tail)
    return cut(head + tail, "")


def _offsets() -> list[tuple[float, float, str, str]]:
    """Label offsets (points) to try, nearest first, in eight directions; further out, below
    first: under a roof is where a roofline chart has room."""
    out = []
    near = ((1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1), (0, -1), (1, 0), (-1, 0))
    far = ((1, -1), (0, -1), (-1, -1), (1, 0), (-1, 0), (1, 1), (0, 1), (-1, 1))
    for r in (7, 24, 42, 62, 84, 110):
        for dx, dy in near if r == 7 else far:
            ha = "left" if dx > 0 else "right" if dx < 0 else "center"
            va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
            scale = 0.75 if dx and dy else 1.0
            out.append((dx * r * scale, dy * r * scale, ha, va))
    return out


_OFFSETS = _offsets()


def place_labels(
    fig, ax, items: list[dict], boxes: list, faint: list, obstacles: np.ndarray
) -> None:
    """Put each label at one of the `_OFFSETS` around its point, with a leader when far.

    Candidate boxes come from the measured text size. A box over another text, or a leader
    crossing another leader or text, costs far more than covering a line or a point; leaders
    may cross the `faint` texts (ridge labels) cheaply. Greedy placement in a few item orders;
    the cheapest layout wins (deterministic: fixed orders, ties to the first).
    """
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    scale = fig.dpi / 72.0
    hard = [(b.x0, b.y0, b.x1, b.y1) for b in boxes]
    soft = [(b.x0, b.y0, b.x1, b.y1) for b in faint]
    ox, oy = (obstacles[:, 0], obstacles[:, 1]) if len(obstacles) else (np.array([]),) * 2
    anchors = np.array([ax.transData.transform((it["x"], it["y"])) for it in items])
    candidates = []  # per item: [(box, leader or None, fixed cost)]
    for i, item in enumerate(items):
        probe = fig.text(0, 0, item["text"], fontsize=7.5)
        ext = probe.get_window_extent(renderer)
        probe.remove()
        w, h = ext.width + 4, ext.height + 4
        px, py = ax.transData.transform((item["x"], item["y"]))
        options = []
        for k, (dx, dy, ha, va) in enumerate(_OFFSETS):
            x0 = px + dx * scale - {"left": 0, "right": w, "center": w / 2}[ha]
            y0 = py + dy * scale - {"bottom": 0, "top": h, "center": h / 2}[va]
            box = (x0, y0, x0 + w, y0 + h)
            far = abs(dx) > 10 or abs(dy) > 10
            leader = (px, py, min(max(px, box[0]), box[2]), min(max(py, box[1]), box[3]))
            leader = leader if far else None
            inside = frame.x0 <= box[0] and box[2] <= frame.x1 and frame.y0 <= box[1]
            inside = inside and box[3] <= frame.y1
            cost = 1000 * (not inside) + 0.5 * k
            cost += int(((ox > box[0]) & (ox < box[2]) & (oy > box[1]) & (oy < box[3])).sum())
            cost += 100 * sum(_overlap(box, o) for o in [*hard, *soft])
            if not leader and len(items) > 1:  # a label nearer another point misleads
                others = np.delete(anchors, i, axis=0)
                cx = np.clip(others[:, 0], box[0], box[2])
                cy = np.clip(others[:, 1], box[1], box[3])
                own = np.hypot(np.clip(px, box[0], box[2]) - px, np.clip(py, box[1], box[3]) - py)
                if np.hypot(cx - others[:, 0], cy - others[:, 1]).min() < own + 12:
                    cost += 60
            if leader:  # a leader along a roof line or through points would be lost
                cost += _near(leader, ox, oy)
                cost += 100 * sum(_through(leader, o) for o in hard)
                cost += 3 * sum(_through(leader, o) for o in soft)
            options.append((box, leader, cost))
        candidates.append(options)

    def layout(order: list[int]) -> tuple[float, dict[int, int]]:
        boxes_: list[tuple] = []
        leaders: list[tuple] = []
        chosen: dict[int, int] = {}
        total = 0.0
        for i in order:
            best = None
            for k, (box, leader, cost) in enumerate(candidates[i]):
                clashes = sum(_overlap(box, o) for o in boxes_)
                clashes += sum(_through(seg, box) for seg in leaders)
                if leader:
                    clashes += sum(_crosses(leader, seg) for seg in leaders)
                    clashes += sum(_through(leader, o) for o in boxes_)
                score = cost + 100 * clashes
                if best is None or score < best[0]:
                    best = (score, k)
                if score < 1:  # a free spot at the nearest offsets: take it
                    break
            total += best[0]
            chosen[i] = best[1]
            box, leader, _ = candidates[i][best[1]]
            boxes_.append(box)
            if leader:
                leaders.append(leader)
        return total, chosen

    n = len(items)
    orders = [
        list(range(n)),
        list(range(n))[::-1],
        sorted(range(n), key=lambda i: -items[i]["y"]),
        sorted(range(n), key=lambda i: min(c[2] for c in candidates[i]), reverse=True),
    ]
    _, chosen = min((layout(order) for order in orders), key=lambda t: t[0])
    for i, item in enumerate(items):
        dx, dy, ha, va = _OFFSETS[chosen[i]]
        leader = candidates[i][chosen[i]][1]
        ax.annotate(
            item["text"],
            (item["x"], item["y"]),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=7.5,
            color="#222",
            zorder=7,
            arrowprops=dict(arrowstyle="-", color="#555", lw=0.7, shrinkA=1, shrinkB=4)
            if leader
            else None,
        )


def _near(seg: tuple, ox: np.ndarray, oy: np.ndarray, within: float = 4.0) -> int:
    """How many obstacle points lie within `within` pixels of a segment's middle part."""
    if not len(ox):
        return 0
    x0, y0, x1, y1 = seg
    dx, dy = x1 - x0, y1 - y0
    t = np.clip(((ox - x0) * dx + (oy - y0) * dy) / max(dx * dx + dy * dy, 1e-9), 0.15, 1.0)
    return int((np.hypot(ox - (x0 + t * dx), oy - (y0 + t * dy)) < within).sum())


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _crosses(s: tuple, t: tuple) -> bool:
    """Whether two segments (x0, y0, x1, y1) properly intersect."""

    def side(ax_, ay, bx, by, cx, cy):
        return np.sign((bx - ax_) * (cy - ay) - (by - ay) * (cx - ax_))

    d1 = side(*t[:2], *t[2:], *s[:2])
    d2 = side(*t[:2], *t[2:], *s[2:])
    d3 = side(*s[:2], *s[2:], *t[:2])
    d4 = side(*s[:2], *s[2:], *t[2:])
    return bool(d1 * d2 < 0 and d3 * d4 < 0)


def _through(seg: tuple, box: tuple) -> bool:
    """Whether a segment passes through a box (sampled; the ends are the label's own)."""
    t = np.linspace(0.1, 0.9, 9)
    x = seg[0] + (seg[2] - seg[0]) * t
    y = seg[1] + (seg[3] - seg[1]) * t
    return bool(((x > box[0]) & (x < box[2]) & (y > box[1]) & (y < box[3])).any())


def cluster_labels(ax, labels: list[dict]) -> list[dict]:
    """Labels of points within a few pixels of each other become one label."""
    items = [dict(lb) for lb in labels]
    items.sort(key=lambda it: (it["x"], -it["y"], it["text"]))
    merged: list[dict] = []
    for it in items:
        px = ax.transData.transform((it["x"], it["y"]))
        for m in merged:
            if np.hypot(*(m["px"] - px)) < 8:
                m["names"].append(it["text"])
                break
        else:
            merged.append({**it, "px": px, "names": [it["text"]]})
    out = []
    for m in merged:
        names = [chart_text(n, 36) for n in m["names"]]
        more = "\n" + _("+{n} more", n=len(names) - 3) if len(names) > 3 else ""
        text = "\n".join(names[:3]) + more
        out.append({"text": text, "x": m["x"], "y": m["y"]})
    return out


def chart_title(kind: str, name: str, scenarios: int) -> str:
    """A roofline's title: the chip and how many scenarios it places."""
    chip, n = chart_text(name), fmt.count(scenarios)
    if kind == "network":
        if scenarios == 1:
            return _("{chip} network roofline: {n} multi-chip scenario", chip=chip, n=n)
        return _("{chip} network roofline: {n} multi-chip scenarios", chip=chip, n=n)
    if scenarios == 1:
        return _("{chip} roofline: {n} scenario", chip=chip, n=n)
    return _("{chip} roofline: {n} scenarios", chip=chip, n=n)


def rows_text(n: int, one: str = "row") -> str:
    """'1 row', '2 rows' (fmt.plural) in the current language; `one` "row", "collective
    row", "measured row", "group" or "more group"."""
    c = fmt.count(n)
    if n == 1:
        return {"row": _("{n} row", n=c), "collective row": _("{n} collective row", n=c),
                "measured row": _("{n} measured row", n=c), "group": _("{n} group", n=c),
                "more group": _("{n} more group", n=c)}[one]  # fmt: skip
    return {"row": _("{n} rows", n=c), "collective row": _("{n} collective rows", n=c),
            "measured row": _("{n} measured rows", n=c), "group": _("{n} groups", n=c),
            "more group": _("{n} more groups", n=c)}[one]  # fmt: skip


def bound_text(bound: str) -> str:
    """'compute-bound', 'memory-bound', 'network-bound' in the current language (the terms)."""
    return {"compute": _("compute-bound"), "memory": _("memory-bound"),
            "network": _("network-bound")}.get(bound, bound)  # fmt: skip
