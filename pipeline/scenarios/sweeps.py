"""Whole numbers and sweeps in dimension cells (docs/input.md#sweeps), counted before built.

Every value is a whole number from 1 to 2^53, the range in which float64 (the results' type)
holds every integer exactly. A sweep's size is computed arithmetically, so `1..1000000000`
is refused by its count without building a list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np

from pipeline.errors import printable

MAX_EXACT = 2**53  # 9,007,199,254,740,992: the largest whole number a float64 keeps exact
_DIGITS = re.compile(r"^\+?\d+$")
_DECIMAL = re.compile(r"^\+?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_RANGE = re.compile(r"^(\d+)\s*\.\.\s*(\d+)(?:\s*\*\s*(\d+))?$")
SWEEP_FORMS = "128|256, 1..512, 1..4096*2"
TOO_BIG = f"is above 2^53 = {MAX_EXACT:,}, the largest whole number the tool keeps exact"


def parse_whole(text: str) -> int:
    """A positive whole number up to 2^53 (`4096`, `4096.0`, `4e3`), read exactly (a decimal,
    never through a float, so `4096.0000000000001` is not 4096); ValueError with the reason
    otherwise."""
    text = text.strip()
    if not _DECIMAL.match(text):
        raise ValueError("is not a number")
    digits = text.lstrip("+").lstrip("0")
    if _DIGITS.match(text) and len(digits) > 16:  # 2^53 has 16 digits: too big, and cheap
        raise ValueError(TOO_BIG)
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError("is not a number") from None
    if value > MAX_EXACT:
        raise ValueError(TOO_BIG)
    if value != value.to_integral_value():
        raise ValueError("is not a whole number")
    if value < 1:
        raise ValueError("is not positive")
    return int(value)


def whole_number_reason(text: str) -> str | None:
    """Why a cell is not a whole number from 1 to 2^53; None when it is (or is blank)."""
    if text == "":
        return None
    try:
        parse_whole(text)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Sweep:
    """A sweep cell: an explicit list, or a range lo..hi (every integer when factor is 1,
    else lo, lo*factor, ... up to hi)."""

    items: tuple[int, ...] = ()
    lo: int = 0
    hi: int = 0
    factor: int = 1

    def __len__(self) -> int:
        if self.items:
            return len(self.items)
        if self.factor == 1:
            return self.hi - self.lo + 1
        count, value = 0, self.lo
        while value <= self.hi:  # at most 53 steps: hi <= 2^53, factor >= 2
            count, value = count + 1, value * self.factor
        return count

    @property
    def largest(self) -> int:
        """The largest value of the sweep."""
        if self.items:
            return max(self.items)
        return self.hi if self.factor == 1 else self.lo * self.factor ** (len(self) - 1)

    def values(self) -> np.ndarray:
        """The values as float64 (exact: every one is at most 2^53)."""
        if self.items:
            return np.asarray(self.items, dtype=float)
        if self.factor == 1:
            return np.arange(self.lo, self.hi + 1, dtype=float)
        return np.asarray([self.lo * self.factor**k for k in range(len(self))], dtype=float)

    def values_at(self, index: np.ndarray) -> np.ndarray:
        """The values at positions `index` (0 = the first), as float64, without building the
        others (a range's are computed: lo + i, or lo * factor**i)."""
        index = np.asarray(index, dtype=np.int64)
        if self.items:
            return np.asarray(self.items, dtype=float)[index]
        if self.factor == 1:
            return (self.lo + index).astype(float)
        powers = np.asarray([self.factor**k for k in range(len(self))], dtype=object)
        return np.asarray(self.lo * powers[index], dtype=float)  # exact: at most 53 values


def is_sweep(text: str) -> bool:
    """Whether a cell is written as a sweep (and not as one number)."""
    return "|" in text or ".." in text


def parse_sweep(text: str) -> Sweep:
    """`128|256`, `1..512` or `1..4096*2`; ValueError with the reason otherwise."""
    text = text.strip()
    if "|" in text:
        items = []
        for part in text.split("|"):
            try:
                items.append(parse_whole(part))
            except ValueError as exc:
                reason = str(exc) if str(exc) == TOO_BIG else "is not a positive integer"
                raise ValueError(f"sweep item '{_short(part.strip())}' {reason}") from None
        return Sweep(items=tuple(items))
    m = _RANGE.match(text)
    if not m:
        raise ValueError(f"not a positive integer or a sweep ({SWEEP_FORMS})")
    texts = m.groups()
    numbers = []
    for part in texts:
        digits = None if part is None else (part.lstrip("0") or "0")
        if digits is not None and (len(digits) > 16 or int(digits) > MAX_EXACT):
            raise ValueError(f"'{_short(part)}' {TOO_BIG}")
        numbers.append(None if digits is None else int(digits))
    lo, hi = numbers[0], numbers[1]
    factor = 1 if numbers[2] is None else numbers[2]
    if lo < 1 or hi < lo:
        raise ValueError(f"range {lo}..{hi} must go from a positive start up to its end")
    if texts[2] is not None and factor < 2:
        raise ValueError(f"geometric factor {factor} must be at least 2")
    return Sweep(lo=lo, hi=hi, factor=factor)


def _short(text: str, limit: int = 40) -> str:
    """A sweep's part inside its cell's message: escaped, and cut shorter than quoted()."""
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")
