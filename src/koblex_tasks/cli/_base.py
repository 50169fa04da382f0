"""What every `koblex` command shares: the exit-code rule, one-line errors, documented arguments, lazy loading.

Commands raise; they never print errors or pick exit codes themselves. `KoblexCommand.invoke` turns an input
error into the one line `koblex <command>: error: <message>` and the exit code of the rule in
`koblex_tasks.cli`, so the rule is written once.
"""

from __future__ import annotations

import csv
import json
import sys
import traceback
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import click

from koblex_tasks._inspect_compat import PrerequisiteError
from koblex_tasks.text import needs_escape

EXIT_OK = 0
EXIT_FAILED = 1  # the input was read but refused or its run failed: a rejected log, an unfinished eval
EXIT_USAGE = 2  # a usage error, or an input that cannot be read or is invalid

EXIT_CODES_HELP = """\b
Exit codes (every command):
  0  success
  1  a rejected or failed input: a log the leaderboard refused,
     a replay whose eval did not finish
  2  a usage error (click prints the usage), or an input that cannot
     be read or is invalid (missing or malformed file, unknown run)
Errors print one line `koblex <command>: error: <message>` on stderr;
--debug (or KOBLEX_DEBUG=1) adds the traceback."""

# Exceptions a command lets escape when its input is at fault (DataError and AuditError are ValueErrors);
# anything else is a bug and keeps its traceback.
INPUT_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError, LookupError)
# What reading a file may raise besides: the csv module's and zipfile's own errors (not ValueErrors), and the
# JSON decoder's recursion on absurdly nested input.
READ_ERRORS: tuple[type[Exception], ...] = (*INPUT_ERRORS, csv.Error, zipfile.BadZipFile, RecursionError)

F = TypeVar("F", bound=Callable[..., Any])


class CommandError(Exception):
    """A refusal the user can act on, printed as one line; `exit_code` follows the rule above."""

    exit_code = EXIT_USAGE


class RunFailed(CommandError):
    """The input was accepted but its run did not succeed (exit 1)."""

    exit_code = EXIT_FAILED


def plain_text(markup: str) -> str:
    """Inspect's messages carry rich markup (`[bold]OPENAI_API_KEY[/bold]`): the text a terminal would show."""
    from rich.text import Text

    try:
        return Text.from_markup(markup).plain
    except Exception:  # not valid markup: print it as it is
        return markup


def one_line(exc: BaseException) -> str:
    """The message on one line, so that an error is always exactly one line of stderr."""
    lines = [part.strip() for part in str(exc).splitlines() if part.strip()]
    return "; ".join(lines) or type(exc).__name__


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Prefix an input error with what was being read (`cannot read labels: ...`)."""
    try:
        yield
    except READ_ERRORS as exc:
        raise CommandError(f"{what}: {exc}") from exc


def echo_json(payload: object) -> None:
    """Machine-readable output: one JSON object, Korean kept readable, NaN refused (it is not JSON), control
    and bidi characters as JSON escapes (a log's text cannot rewrite the terminal)."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
    click.echo("".join(f"\\u{ord(ch):04x}" if needs_escape(ch) else ch for ch in text))


# click >= 8.5 lists documented arguments itself ("Positional arguments"); older click has no argument help.
_NATIVE_ARGUMENT_HELP = hasattr(click.Command, "format_arguments")


class DocumentedArgument(click.Argument):
    """A positional argument with a help text, on every click that Inspect accepts (>= 8.1.3)."""

    def __init__(self, param_decls: Sequence[str], help: str | None = None, **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        self.help = help


def argument(*param_decls: str, help: str | None = None, **attrs: Any) -> Callable[[F], F]:
    """`click.argument` with a help text. An explicit `metavar` is printed as is: mark it `[X]`/`X...`."""
    return click.argument(*param_decls, cls=DocumentedArgument, help=help, **attrs)


class KoblexCommand(click.Command):
    """A leaf command: applies the exit-code rule to what its callback does, documents its arguments."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not _NATIVE_ARGUMENT_HELP:
            rows = [
                (p.human_readable_name, p.help or "")
                for p in self.get_params(ctx)
                if isinstance(p, DocumentedArgument)
            ]
            if rows:
                with formatter.section("Positional arguments"):
                    formatter.write_dl(rows)
        super().format_options(ctx, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        """The whole first line of the help in command lists (click would cut it at `limit` characters)."""
        return self.short_help or (self.help or "").strip().partition("\n")[0]

    def invoke(self, ctx: click.Context) -> Any:
        try:
            rv = super().invoke(ctx)
        except CommandError as exc:
            self._fail(ctx, exc, exc.exit_code)
        except INPUT_ERRORS as exc:  # our setup errors are ValueErrors too: bad input, exit 2
            if isinstance(exc, BrokenPipeError):
                raise  # click quiets a closed pipe (`koblex ... | head`)
            self._fail(ctx, exc, EXIT_USAGE)
        except PrerequisiteError as exc:  # Inspect's own refusal, e.g. a provider without its API key
            self._fail(ctx, RunFailed(plain_text(str(exc))), EXIT_FAILED)
        if isinstance(rv, int) and rv != EXIT_OK:
            ctx.exit(rv)  # an int returned by a callback is its exit code, in standalone mode too
        return rv

    @staticmethod
    def _fail(ctx: click.Context, exc: Exception, code: int) -> NoReturn:
        if ctx.find_root().params.get("debug"):
            traceback.print_exception(exc)
        click.echo(f"{ctx.command_path}: error: {one_line(exc)}", err=True)
        ctx.exit(code)


class KoblexGroup(click.Group):
    """A group whose commands follow the rule; `lazy` names commands imported only when used.

    `lazy` maps a command name to (a function that imports and returns it, its short help), so `koblex replay` does not import
    the audit's statistics stack and `koblex --help` lists the commands without importing any of them (a
    test checks each short help against its command's).
    """

    command_class = KoblexCommand
    group_class = type  # subgroups are KoblexGroups too

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, tuple[Callable[[], click.Command], str]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*(name for name in self.commands if name not in self.lazy), *self.lazy]  # not load order

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(self.lazy[cmd_name][0](), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's command list, with a lazy command that is not imported yet shown by its declared help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        rows = []
        for name in names:
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name][1]))
            elif (command := self.get_command(ctx, name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def run(group: click.Group, argv: Sequence[str] | None, prog_name: str, command: Sequence[str] = ()) -> int:
    """Run `prog_name COMMAND... ARGV` (ARGV default: the process arguments) and return the exit code.

    Never raises SystemExit, so tests and scripts can call the CLI like a function.
    """
    args = [*command, *(sys.argv[1:] if argv is None else argv)]
    try:
        rv = group.main(args, prog_name=prog_name, standalone_mode=False)
    except click.ClickException as exc:  # usage errors: click's usage message, exit 2
        exc.show()
        return exc.exit_code
    except click.Abort:  # Ctrl-C: the run did not finish
        click.echo("Aborted!", err=True)
        return EXIT_FAILED
    return rv if isinstance(rv, int) else EXIT_OK
