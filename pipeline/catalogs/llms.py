"""The model catalog: a data file shipped in the package (pipeline/data/models.csv), one row
per decoder-only model with the dims of its published config, extended or overridden by the
user's CSV or TOML files or DataFrames (docs/model.md#the-model-catalog). A user's row with a
wrong value is left out and reported (file, line, column, what would be valid); the other
models still load."""

from __future__ import annotations

import functools
import hashlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import Named, did_you_mean
from pipeline.catalogs.llms_file import (
    FILE_HINT,
    canonical_columns,
    read_model_frame,
    read_model_toml,
)
from pipeline.catalogs.spellings import alias_map, spelling, split_aliases, union_aliases
from pipeline.catalogs.table_file import TableKind, read_file, read_given
from pipeline.errors import (
    BrokenInstall,
    InvalidModelFile,
    UnknownModel,
    printable,
    quoted,
)
from pipeline.model.dtypes import dtype_bytes
from pipeline.model.params import kv_cache_bytes, param_counts
from pipeline.textfile import read_bytes

# whole-number columns: what each means and an example (llama3-8b; MoE: mixtral-8x7b)
WHOLE = {
    "D": ("hidden size", 4096),
    "F": ("dense MLP width", 14336),
    "N": ("query heads", 32),
    "K": ("KV heads", 8),
    "H": ("head dim", 128),
    "L": ("layers", 32),
    "V": ("vocab size", 128256),
    "E": ("experts", 8),
    "k": ("active experts per token", 2),
    "F_expert": ("expert MLP width", 14336),
    "shared": ("shared experts", 1),
    "F_shared": ("shared expert MLP width", 14336),
}
FLAGS = ("tied", "qkv_bias")  # true/false; blank: false
REQUIRED = ("D", "N", "K", "H", "L", "V")  # and F (dense) or E, k, F_expert (MoE)
MOE = ("E", "k", "F_expert")
TEXT_COLUMNS = ("aliases", "source", "as_of")
COLUMNS = ("name", "aliases", *WHOLE, *FLAGS, "params", "source", "as_of")
MOST = 2**53  # float64 holds every whole number up to here exactly (docs/input.md#numbers)
TRUE, FALSE = ("true", "yes", "1"), ("false", "no", "0")


@dataclass(frozen=True)
class ModelCatalog(Named):
    """Models by canonical name, the alias lookup, a version string and the rows refused."""

    models: pd.DataFrame  # index: canonical name, columns: COLUMNS minus name
    aliases: dict[str, str]  # lower-case spelling -> canonical name
    version: str
    sources: tuple[str, ...]
    files: tuple[Path, ...] = ()  # the user models files read, resolved when read
    problems: tuple[str, ...] = ()  # the user's rows left out, FILE:LINE: column C: why

    def model(self, text: str) -> pd.Series:
        """One model's row by name or alias; UnknownModel (with a did-you-mean) if none."""
        name = self.resolve(text)
        if name is None:
            hint = self.suggest(text)
            tail = f" (did you mean '{hint}'?)" if hint else "; see `pipeline models` for the list"
            raise UnknownModel(f"unknown model {quoted(text)}{tail}")
        return self.models.loc[name]

    def sizes(self) -> pd.DataFrame:
        """What each model's dims give, a row per model (model.params): its parameters
        counted (`params`; `active_params`, what one token uses), its weights at bf16
        (`weight_bytes`) and its KV cache per token at bf16 (`kv_token_bytes`)."""
        counted = param_counts(self.models)[["params", "active_params"]]
        return counted.assign(
            weight_bytes=counted["params"] * dtype_bytes("bf16"),
            kv_token_bytes=kv_cache_bytes(self.models),
        )


MODELS_ACCEPTED = (
    "models= takes a CSV or TOML path, a DataFrame with the model catalog's columns (as "
    "pipeline.models() returns), a ModelCatalog (load_models()) or a list of them"
)
MODELS = TableKind(
    error=InvalidModelFile,
    noun="models file",
    needs=FILE_HINT,
    columns=lambda header, where: canonical_columns(header, COLUMNS, where),
    toml=lambda path, text: read_model_toml(path, text, COLUMNS),
    frame=lambda frame, label: read_model_frame(frame, label, COLUMNS),
    rows="model rows",
    accepted=MODELS_ACCEPTED,
    strip=True,
)
Given = str | Path | pd.DataFrame | ModelCatalog
Models = Given | Sequence[Given] | None  # `models=` of models(), later analyze()


def models_from(models: Models, strict: bool = True) -> ModelCatalog:
    """The catalog `models=` asks for: a ModelCatalog as it is, else the built-in one with
    each file, frame or catalog given (one, or a list) added."""
    if isinstance(models, ModelCatalog):
        return models
    if models is None:
        return load_models(strict=strict)
    given = list(models) if isinstance(models, list | tuple) else [models]
    return load_models(given, strict=strict)


def builtin_models_path() -> Path:
    """Path of the model catalog shipped in the package."""
    return Path(str(resources.files("pipeline") / "data" / "models.csv"))


def load_models(user_files: Sequence[Given] = (), strict: bool = True) -> ModelCatalog:
    """The built-in catalog with each user file (CSV or TOML), DataFrame or ModelCatalog
    adding or overriding models, in order. A row with a wrong value is left out and said in
    `problems`; with `strict`, any such row raises InvalidModelFile listing every one."""
    data, base = _builtin()
    digest = hashlib.sha256(data)
    sources, files, problems = [str(builtin_models_path())], [], []
    for number, given in enumerate(user_files, start=1):
        if isinstance(given, ModelCatalog):  # its models are whole: they override every field
            digest.update(given.version.encode())
            base = _typed(pd.concat([base.drop(index=given.models.index, errors="ignore"),
                                     given.models]))  # fmt: skip
            sources.extend(given.sources[1:])
            files.extend(given.files)
            problems.extend(given.problems)
            continue
        path, (cells, lines), data, file = read_given(given, number, MODELS)
        digest.update(data)
        files.extend([file] if file else [])
        base = _add(base, cells, path, lines, problems)
        sources.append(str(path))
    if strict and problems:
        raise InvalidModelFile(
            f"{len(problems)} model row(s) refused:\n  " + "\n  ".join(problems), problems
        )
    return ModelCatalog(
        models=base,
        aliases=alias_map(base.index, base["aliases"]),
        version=f"{base['as_of'].max()}+{digest.hexdigest()[:10]}",
        sources=tuple(sources),
        files=tuple(files),
        problems=tuple(problems),
    )


@functools.cache
def _builtin() -> tuple[bytes, pd.DataFrame]:
    """The shipped catalog's bytes and models, read once per process; a problem in it is a
    broken installation, never a catalog with models missing."""
    path = builtin_models_path()
    data = read_bytes(path, BrokenInstall, "model catalog")
    cells, lines = read_file(path, data, MODELS)
    problems: list[str] = []
    models = _add(_typed(pd.DataFrame(columns=list(COLUMNS)).set_index("name")), cells,
                  Path(path.name), lines, problems)  # fmt: skip
    if problems:
        raise BrokenInstall("the model catalog has wrong rows:\n  " + "\n  ".join(problems))
    return data, models


def _add(
    base: pd.DataFrame, cells: pd.DataFrame, path: Path, lines: list, problems: list[str]
) -> pd.DataFrame:
    """`base` with the file's rows added or overriding; a row with a problem is left out and
    its problems appended to `problems`. Unknown columns or no `name`: the whole file is an
    error (nothing in it can be trusted to mean what it says)."""
    unknown = [c for c in cells.columns if c not in COLUMNS]
    if unknown or "name" not in cells.columns or cells.empty:
        said = [f"unknown column {quoted(c)}" + _hint(c) for c in unknown]
        said += [] if "name" in cells.columns else ["missing column 'name'"]
        said += ["no model rows"] if cells.empty and not said else []
        raise InvalidModelFile(
            f"{printable(path)}: " + "; ".join(said) + f"; the columns are {', '.join(COLUMNS)}"
        )
    cells = cells.reindex(columns=list(COLUMNS), fill_value="").astype(str)
    toml = path.suffix.lower() == ".toml"

    def where(i: int) -> str:
        line = f":{lines[i]}" if lines[i] is not None else ""
        return f"{printable(path)}{line}" + (
            f" [{printable(cells['name'].iat[i])}]" if toml else ""
        )

    bad: dict[int, list[str]] = {}
    typed = _parse(cells, where, bad)
    aliases = alias_map(base.index, base["aliases"])
    rows: dict[str, dict] = {}
    place: dict[str, int] = {}
    for i, fields in enumerate(typed.to_dict("records")):
        if i in bad:
            continue
        name = spelling(fields["name"])
        target = aliases.get(name, name)
        if target in place:
            first = where(place[target])
            alias = "" if name == spelling(target) else f" ({quoted(fields['name'])} is its alias)"
            bad[i] = [f"{where(i)}: column name: model {quoted(target)} again{alias} (first at "
                      f"{first}); give each model once per file"]  # fmt: skip
            continue
        given = {k: v for k, v in fields.items() if k != "name" and _given(v)}
        own = split_aliases(given.get("aliases", ""))
        clash = [a for a in own if aliases.get(a, target) != target]
        if clash:
            other = aliases[clash[0]]
            at = f" at {where(place[other])}" if other in place else ""
            bad[i] = [f"{where(i)}: column aliases: {quoted(clash[0])} is already model "
                      f"{quoted(other)}{at}; choose another alias"]  # fmt: skip
            continue
        for a in (target, *own):  # the file's later rows see this row's names and aliases
            aliases[a] = target
        if target in base.index:
            row = base.loc[target].to_dict()
            if "aliases" in given:  # a user's aliases add to the catalog's, never drop one
                given["aliases"] = union_aliases(row["aliases"], given["aliases"])
            given.setdefault("source", f"{row['source']}; overridden by {path}")
            rows[target] = {**row, **given}
        else:
            rows[target] = {"aliases": "", "tied": False, "qkv_bias": False, "source": str(path),
                            "as_of": "", **given}  # fmt: skip
        place[target] = i
    candidates = _typed(pd.DataFrame.from_dict(rows, orient="index", columns=base.columns))
    for target, said in _consistency(candidates, lambda t: where(place[t])).items():
        bad[place[target]] = said
    for i in sorted(bad):
        problems.extend(bad[i])
    keep = [t for t in rows if place[t] not in bad]
    kept = candidates.loc[keep]
    merged = pd.concat([base.drop(index=[t for t in keep if t in base.index]), kept])
    order = [*(t for t in base.index), *(t for t in keep if t not in base.index)]
    return _typed(merged.reindex(order))


def _hint(col: str) -> str:
    hint = did_you_mean(col, list(COLUMNS))
    return f" (did you mean '{hint}'?)" if hint else ""


def _given(value) -> bool:
    return not (value is None or value is pd.NA or value == "" or
                (isinstance(value, float) and np.isnan(value)))  # fmt: skip


def _parse(cells: pd.DataFrame, where: Callable[[int], str], bad: dict) -> pd.DataFrame:
    """The text cells as values: whole numbers, flags, params; a problem per wrong cell,
    by row, in `bad` (each saying what would be valid)."""
    out = pd.DataFrame({"name": cells["name"]}, index=cells.index)

    def refuse(i: int, col: str, reason: str) -> None:
        bad.setdefault(i, []).append(f"{where(i)}: column {col}: {reason}")

    for i in np.flatnonzero((cells["name"] == "").to_numpy()):
        refuse(i, "name", "empty model name")
    for col in ("name", *TEXT_COLUMNS):
        for i in np.flatnonzero((cells[col].map(printable) != cells[col]).to_numpy()):
            refuse(i, col, f"{quoted(cells[col].iat[i])} holds a control character; remove it")
        if col != "name":
            out[col] = cells[col]
    for col, (meaning, example) in WHOLE.items():
        text = cells[col]
        given = text != ""
        nums = pd.to_numeric(text.where(given), errors="coerce")
        least = 0 if col == "shared" else 1
        ok = np.isfinite(nums) & (nums == np.floor(nums)) & (nums >= least) & (nums <= MOST)
        valid = f"{col} ({meaning}) is a whole number from {least} to 2^53, e.g. {example}"
        for i in np.flatnonzero((given & ~ok).to_numpy()):
            value = nums.iat[i]
            what = (
                "is not a number" if np.isnan(value)
                else "is not a whole number" if np.isfinite(value) and value != np.floor(value)
                else "is too large" if value > MOST else f"is below {least}"
            )  # fmt: skip
            refuse(i, col, f"{quoted(text.iat[i])} {what}; {valid}")
        out[col] = nums.where(ok)
    for col in FLAGS:
        text = cells[col].str.lower()
        for i in np.flatnonzero((~text.isin(("", *TRUE, *FALSE))).to_numpy()):
            refuse(i, col, f"{quoted(cells[col].iat[i])} is not true or false")
        out[col] = text.map(lambda t: True if t in TRUE else False if t in FALSE else None)
    nums = pd.to_numeric(cells["params"].where(cells["params"] != ""), errors="coerce")
    for i in np.flatnonzero(((cells["params"] != "") & ~(nums > 0) | np.isinf(nums)).to_numpy()):
        refuse(i, "params", f"{quoted(cells['params'].iat[i])} is not a positive number "
               "(the published parameter count, e.g. 8.03e9)")  # fmt: skip
    out["params"] = nums
    return out


def _consistency(models: pd.DataFrame, where: Callable[[str], str]) -> dict[str, list[str]]:
    """Problems of whole models (after a user's fields are merged into the catalog's): the
    required dims, F or all of E, k, F_expert (never both F and F_expert), k at most E, K
    dividing N."""
    found: dict[str, list[str]] = {}
    f = {c: models[c].to_numpy(dtype=float, na_value=np.nan) for c in WHOLE}
    moe = ~np.isnan(f["E"])

    def add(mask: np.ndarray, col: str, reason: Callable[[int], str]) -> None:
        for i in np.flatnonzero(mask):
            name = models.index[i]
            found.setdefault(name, []).append(
                f"{where(name)}: column {col}: model {quoted(name)}: {reason(i)}"
            )

    for col in REQUIRED:
        meaning, example = WHOLE[col]
        add(np.isnan(f[col]), col, lambda i, m=meaning, e=example, c=col:
            f"missing; every model needs {c} ({m}, e.g. {e})")  # fmt: skip
    add(~moe & np.isnan(f["F"]), "F", lambda i: "missing; a dense model needs F (dense MLP "
        "width, e.g. 14336), an MoE model E, k and F_expert instead")  # fmt: skip
    for col in MOE:
        add(
            moe & np.isnan(f[col]),
            col,
            lambda i, c=col: (
                f"missing; an MoE model (E given) "
                f"needs {c} ({WHOLE[c][0]}, e.g. {WHOLE[c][1]}) with E, k and F_expert together"
            ),
        )
    add(moe & ~np.isnan(f["F"]), "F", lambda i: "F (dense MLP width) and F_expert (expert MLP "
        "width) both given; an MoE model (E given) uses F_expert only: leave F blank")  # fmt: skip
    for col in ("k", "F_expert", "shared", "F_shared"):
        add(~moe & ~np.isnan(f[col]), col, lambda i, c=col: f"{c} is for MoE models: give E "
            "(experts), k and F_expert too, or leave it blank")  # fmt: skip
    add(f["k"] > f["E"], "k", lambda i: f"{f['k'][i]:.0f} is more than E = {f['E'][i]:.0f}; "
        "k (active experts per token) is at most E")  # fmt: skip
    add(np.fmod(f["N"], f["K"]) > 0, "K", lambda i: (
        f"{f['K'][i]:.0f} does not divide N = {f['N'][i]:.0f}; K (KV heads) divides N (query "
        f"heads): one of {', '.join(str(d) for d in _divisors(f['N'][i]))}"))  # fmt: skip
    return found


def _divisors(n: float) -> list[int]:
    whole = int(n)
    return [d for d in range(1, whole + 1) if whole % d == 0][:24]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The catalog's dtypes: whole numbers Int64 (blank: <NA>), flags bool, params float,
    text str; index `name`."""
    out = frame.reindex(columns=list(COLUMNS[1:])).copy()
    for col in WHOLE:
        out[col] = pd.to_numeric(out[col], errors="coerce").round().astype("Int64")
    for col in FLAGS:
        out[col] = out[col].fillna(False).astype(bool)
    out["params"] = pd.to_numeric(out["params"], errors="coerce").astype(float)
    for col in TEXT_COLUMNS:
        out[col] = out[col].fillna("").astype(str)
    out.index = out.index.astype(str)
    out.index.name = "name"
    return out


def models(models: Models = None, strict: bool = False) -> pd.DataFrame:
    """The model catalog as a DataFrame, one row per model (index: name), every column with
    `source` and `as_of`, with `models` (a file, a DataFrame or a list) adding or overriding.
    Rows of `models` with a wrong value are left out with a warning (they are in
    `.attrs["problems"]`); `strict=True` raises InvalidModelFile instead."""
    catalog = models_from(models, strict=strict)
    frame = catalog.models.copy()
    frame.attrs["problems"] = list(catalog.problems)
    if catalog.problems:
        warnings.warn(
            "model rows left out:\n  " + "\n  ".join(catalog.problems), UserWarning, stacklevel=2
        )
    return frame
