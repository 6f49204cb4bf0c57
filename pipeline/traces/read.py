"""Reading a PyTorch profiler trace (Chrome trace JSON, `.json` or `.json.gz`) a piece at a
time: the `traceEvents` array event by event, each kept only as the few fields the import
needs (never `metadata`, `distributedInfo` or any other top-level value but `deviceProperties`'
names and `record_shapes`), so a 200 MB trace takes tens of MB, not GBs."""

from __future__ import annotations

import gzip
import json
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import ScenarioFileError, printable

CHUNK = 1 << 20  # characters read at a time
LARGEST_VALUE = 1 << 26  # characters of one event (or top-level value): past it, not a trace
_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n,"
GPU_CATEGORIES = frozenset({"kernel", "gpu_memset", "gpu_memcpy"})
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})


@dataclass
class Events:
    """The events the import uses, a column per field: numbers in arrays, texts (a thread
    `pid/tid`, a name, an op's recorded `Input Dims`, `Input type` and `Concrete Inputs` as
    JSON) one string for all the events that share it."""

    ops: dict = field(default_factory=lambda: _columns("ts dur", "thread name dims types inputs"))
    launches: dict = field(default_factory=lambda: _columns("ts", "thread name", "link"))
    gpu: dict = field(default_factory=lambda: _columns("dur", "", "link"))
    used: set = field(default_factory=set)  # the devices GPU work ran on
    devices: list[tuple[object, str]] = field(default_factory=list)  # (id, name)
    record_shapes: object = None


def _columns(numbers: str, texts: str, links: str = "") -> dict:
    return {**{n: array("d") for n in numbers.split()}, **{n: [] for n in texts.split()},
            **{n: array("q") for n in links.split()}}  # fmt: skip


def _link(args: dict):
    """The id a launch and its GPU work share: `correlation`, else (older traces) `External id`."""
    value = args.get("correlation", args.get("External id"))
    return value if isinstance(value, int) and 0 <= value < 2**63 else -1


def _keep(events: Events, event, names: frozenset, texts: dict) -> None:
    if not isinstance(event, dict) or event.get("ph") != "X":
        return
    cat, args = event.get("cat"), event.get("args")
    args = args if isinstance(args, dict) else {}
    if cat == "cpu_op" and event.get("name") in names:
        ops = events.ops
        ops["ts"].append(_number(event.get("ts")))
        ops["dur"].append(_number(event.get("dur")))
        ops["thread"].append(_text(texts, f"{event.get('pid')}/{event.get('tid')}"))
        ops["name"].append(_text(texts, str(event["name"])))
        ops["dims"].append(_text(texts, json.dumps(args.get("Input Dims"))))
        ops["types"].append(_text(texts, json.dumps(args.get("Input type"))))
        ops["inputs"].append(_text(texts, json.dumps(args.get("Concrete Inputs"))))
    elif cat in LAUNCH_CATEGORIES:
        launches = events.launches
        launches["ts"].append(_number(event.get("ts")))
        launches["thread"].append(_text(texts, f"{event.get('pid')}/{event.get('tid')}"))
        launches["link"].append(_link(args))
        launches["name"].append(_text(texts, str(event.get("name", ""))))
    elif cat in GPU_CATEGORIES:
        events.gpu["dur"].append(_number(event.get("dur")))
        events.gpu["link"].append(_link(args))
        events.used.add(args.get("device"))


def _number(value) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _text(texts: dict, text: str) -> str:
    """One string for every event's copy of a thread or launch name."""
    return texts.setdefault(text, text)


def read_events(path: Path, op_names) -> Events:
    """The trace's GPU work, launches and the ops named `op_names`, and its device names;
    ScenarioFileError for what is not a trace."""
    events, names, texts = Events(), frozenset(op_names), {}
    with _open(path) as text:
        for key, value in _top_level(_Buffer(text, path)):
            if key == "traceEvents":
                for event in value:
                    _keep(events, event, names, texts)
            elif key == "deviceProperties" and isinstance(value, list):
                events.devices = [(d.get("id"), str(d.get("name", ""))) for d in value
                                  if isinstance(d, dict)]  # fmt: skip
            elif key == "record_shapes":
                events.record_shapes = value
    return events


def _open(path: Path):
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            packed = fh.read(2) == b"\x1f\x8b"
        if packed:
            return gzip.open(path, "rt", encoding="utf-8", errors="replace")
        return open(path, encoding="utf-8", errors="replace")
    except OSError as error:
        raise ScenarioFileError(f"{printable(path)}: cannot read the trace: "
                                f"{error.strerror or error}") from None  # fmt: skip


class _Buffer:
    """The text read so far and not yet used, refilled a chunk at a time."""

    def __init__(self, fh, path: Path):
        self.fh, self.path, self.text, self.pos, self.done = fh, path, "", 0, False

    def fill(self) -> bool:
        if self.done:
            return False
        try:
            more = self.fh.read(CHUNK)
        except (OSError, EOFError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
            raise self.error(f"cannot read it ({error})") from None
        self.text, self.pos = self.text[self.pos :] + more, 0
        self.done = not more
        return bool(more)

    def skip_blank(self) -> str:
        """The next character past blanks and commas ('' at the end)."""
        while True:
            text, pos = self.text, self.pos
            while pos < len(text) and text[pos] in _BLANK:
                pos += 1
            self.pos = pos
            if pos < len(text) or not self.fill():
                return self.text[self.pos : self.pos + 1]

    def expect(self, char: str) -> None:
        if self.skip_blank() != char:
            raise self.error(f"expected {char!r}")
        self.pos += 1

    def value(self):
        """The next JSON value; one cut off by the end of the chunk is read again with more."""
        self.skip_blank()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.done:  # a number may go on in the next chunk
                    self.pos = end
                    return value
            except json.JSONDecodeError:
                if self.done:
                    raise self.error("it is not complete JSON") from None
            if len(self.text) - self.pos > LARGEST_VALUE:  # broken JSON, not a value to finish
                raise self.error(f"no JSON value ends in {LARGEST_VALUE} characters")
            self.fill()

    def error(self, what: str) -> ScenarioFileError:
        return ScenarioFileError(f"{printable(self.path)}: not a profiler trace (Chrome trace "
                                 f"JSON, .json or .json.gz): {what}")  # fmt: skip


def _top_level(buffer: _Buffer) -> Iterator[tuple[str, object]]:
    """The top-level object's keys with their values; `traceEvents`' value an iterator."""
    buffer.expect("{")
    while buffer.skip_blank() not in ("}", ""):
        key = buffer.value()
        buffer.expect(":")
        if key == "traceEvents":
            yield key, _array(buffer)
        else:
            yield key, buffer.value()


def _array(buffer: _Buffer) -> Iterator[object]:
    buffer.expect("[")
    while buffer.skip_blank() not in ("]", ""):
        yield buffer.value()
    buffer.expect("]")
