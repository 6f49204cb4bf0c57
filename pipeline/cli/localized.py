"""`--help` in the language of the catalog (pipeline/i18n.py): the commands' docstrings, their
options' help and click's own headings pass through `_()` when the help is formatted, so the
command modules keep plain English and need nothing of this.

A docstring is translated paragraph by paragraph, as click wraps it: a prose paragraph is
keyed by its lines joined with single spaces (rewrapping the docstring keeps its Korean), a
`\\b` block (kept as written) by its lines as written, without the `\\b`. The language is the
one `--lang` asks for anywhere on the command line (`run --help --lang ko` too: `--help` is
eager and may be processed first), else the current one (PIPELINE_LANG), else English; an
unknown PIPELINE_LANG leaves the help English instead of failing (a command it would run is
refused: LocalizedCommand.invoke). In English the help is byte for byte click's own
(tests/test_cli_localized.py)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import click

from pipeline import i18n
from pipeline.i18n import _, chosen_lang, current_lang, environment_lang, lang_code, use_lang

__all__ = ["LocalizedCommand", "LocalizedGroup", "help_texts", "localize"]

ASKED = "pipeline.cli.localized.lang"  # ctx.meta: the language --lang asks for, read early
# click's own words in a help page, passed through _() where click would pass them through its
# gettext: they are texts of the catalog like the rest
FRAME = ("Usage:", "Options", "Commands", "default: {default}", "required", "env var: {var}")
# `_()` takes literal texts (tests/test_i18n.py finds them so); the help's texts, docstrings and
# options' help, are found by help_texts() instead, and translated by the same function
translate = i18n._


def _paragraphs(doc: str) -> Iterator[tuple[str, str, bool]]:
    """(head, text, kept) of each paragraph of a docstring, split as click's wrap_text splits
    it: a `\\b` block's head is its `\\b` line and its text its lines as written (kept); a prose
    paragraph's head its indentation and its text its lines joined by single spaces."""
    buf: list[str] = []
    text = inspect.cleandoc(doc).partition("\f")[0].expandtabs()
    for line in [*text.splitlines(), ""]:
        if line:
            buf.append(line)
            continue
        if buf and buf[0].strip() == "\b":
            yield buf[0], "\n".join(buf[1:]), True
        elif buf:
            indent = buf[0][: len(buf[0]) - len(buf[0].lstrip())]
            yield indent, " ".join(part.strip() for part in buf), False
        buf = []


def translated_doc(doc: str) -> str:
    """A docstring in the current language, paragraph by paragraph, ready for click's
    wrap_text (English: the same paragraphs, so the same lines)."""
    parts = []
    for head, text, kept in _paragraphs(doc):
        parts.append(f"{head}\n{translate(text)}" if kept else f"{head}{translate(text)}")
    return "\n\n".join(parts)


def _option_record(param: click.Parameter, ctx: click.Context) -> tuple[str, str] | None:
    """An option's line of the Options list with its help and [default: ...] in the current
    language (click.Option.get_help_record, its words through _())."""
    record = param.get_help_record(ctx)
    if record is None or not isinstance(param, click.Option):
        return None  # a hidden option; an argument, which click lists in the usage line only
    extra = param.get_help_extra(ctx)
    items = []
    if "envvars" in extra:
        items.append(_("env var: {var}", var=", ".join(extra["envvars"])))
    if "default" in extra:
        items.append(_("default: {default}", default=extra["default"]))
    if "range" in extra:
        items.append(extra["range"])
    if "required" in extra:
        items.append(_("required"))  # the one value click gives it
    help = translate(param.help) if param.help else ""
    if items:
        help = f"{help}  [{'; '.join(items)}]" if help else f"[{'; '.join(items)}]"
    return record[0], help


def _asked_lang(command: click.Command, ctx: click.Context, args: list[str]) -> str | None:
    """The language --lang names on the command line, wherever it stands; None without one
    (or with a command line click will refuse anyway)."""
    if not any(p.name == "lang" for p in command.get_params(ctx)):
        return None
    try:
        opts, _args, _order = command.make_parser(ctx).parse_args(args=list(args))
    except click.UsageError:
        return None
    asked = opts.get("lang")
    return lang_code(asked) if isinstance(asked, str) else None


def _help_lang(ctx: click.Context) -> str:
    """The language of the help: --lang's, else the current one; an unknown PIPELINE_LANG is
    not a reason to refuse the help."""
    if asked := ctx.meta.get(ASKED):
        return asked
    try:
        return current_lang()
    except ValueError:
        return "en"


class LocalizedCommand(click.Command):
    """A click command whose help is formatted in the current language."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if (asked := _asked_lang(self, ctx, args)) is not None:
            ctx.meta[ASKED] = asked  # before --help, which may come first and exits
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        """The command run, once PIPELINE_LANG is known to name a language when --lang does
        not choose one: else a usage error naming the variable (exit 2), before anything."""
        if not isinstance(self, click.Group) and chosen_lang() is None:
            try:
                environment_lang()
            except ValueError as exc:
                raise click.UsageError(str(exc), ctx) from None
        return super().invoke(ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with use_lang(_help_lang(ctx)):
            super().format_help(ctx, formatter)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with use_lang(_help_lang(ctx)):
            pieces = self.collect_usage_pieces(ctx)
            formatter.write_usage(ctx.command_path, " ".join(pieces), f"{_('Usage:')} ")

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.deprecated or not self.help:
            return super().format_help_text(ctx, formatter)  # nothing to translate, or click's
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(translated_doc(self.help))

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = [r for p in self.get_params(ctx) if (r := _option_record(p, ctx)) is not None]
        if records:
            with formatter.section(_("Options")):
                formatter.write_dl(records)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.epilog:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(translated_doc(self.epilog))

    def get_short_help_str(self, limit: int = 45) -> str:
        english = self.help, self.short_help
        self.help = translated_doc(self.help) if self.help else self.help
        self.short_help = translate(self.short_help) if self.short_help else self.short_help
        try:  # click's shortening of the translated text
            return super().get_short_help_str(limit)
        finally:
            self.help, self.short_help = english


class LocalizedGroup(LocalizedCommand, click.Group):
    """A click group whose help, and its list of commands, is in the current language."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)  # LocalizedCommand's, then as click.Group's
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = [
            (name, cmd)
            for name in self.list_commands(ctx)
            if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden
        ]
        if commands:  # as click.Group's, its heading through _()
            limit = formatter.width - 6 - max(len(name) for name, _cmd in commands)
            rows = [(name, cmd.get_short_help_str(limit)) for name, cmd in commands]
            with formatter.section(_("Commands")):
                formatter.write_dl(rows)


def localize(command: click.Command) -> click.Command:
    """`command` (and a group's commands, all the way down) with its help in the current
    language: its class becomes the Localized one, nothing else of it changes."""
    if isinstance(command, click.Group):
        command.__class__ = type(command) if isinstance(command, LocalizedGroup) else LocalizedGroup
        for sub in command.commands.values():
            localize(sub)
    elif type(command) is click.Command:
        command.__class__ = LocalizedCommand
    return command


def help_texts(group: click.Group) -> dict[str, str]:
    """Every text of the group's help pages that goes through the catalog -> where it is: the
    commands' docstring paragraphs, short helps and epilogs, every option's help, click's
    headings (FRAME)."""
    found = dict.fromkeys(FRAME, "click's help layout")
    for path, command in _walk(group, "pipeline"):
        ctx = click.Context(command, info_name=path)
        for field in ("help", "epilog"):
            for _head, text, _kept in _paragraphs(getattr(command, field) or ""):
                found.setdefault(text, f"{path}: {'docstring' if field == 'help' else field}")
        if command.short_help:
            found.setdefault(command.short_help, f"{path}: short help")
        for param in command.get_params(ctx):
            if getattr(param, "help", None):
                found.setdefault(param.help, f"{path} {param.opts[0]}")
    return found


def _walk(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _walk(sub, f"{path} {name}")
