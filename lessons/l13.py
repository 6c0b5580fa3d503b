"""``python -m lessons.l13``: re-run the lesson's experiments and check every claim.

Prints one row per claim: the claim in words, the value the lesson states, the value
computed now, and whether they agree within tolerance. Exits 0 when every claim holds,
1 when any does not (2 for a usage error).

The table, the summary and this command's help are in the language of ``--lang`` (``en``,
``zh``, ``zh_CN``), else the one :func:`lessons.i18n.language` finds (``LESSONS_LANG``, a
``.lessons-language`` file in the current folder), else English. ``--json`` keeps its keys
and values in English and adds each claim's ``text`` in that language.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time

from . import i18n, results_cache
from .claims._registry import _

LANGUAGES = ("en", "zh", "zh_CN")


def _notebook(value: str) -> str:
    from .claims import notebook_number

    try:
        return notebook_number(value)
    except ValueError:
        message = _("expected a notebook number such as 3 or 03; got {value!r}").format(value=value)
        raise argparse.ArgumentTypeError(message) from None


def _language(value: str) -> str:
    if value not in LANGUAGES:
        message = _("expected one of {choices}; got {value!r}").format(
            choices=", ".join(LANGUAGES), value=value
        )
        raise argparse.ArgumentTypeError(message)
    return i18n.normalize(value)


def _lang_option(p) -> None:
    p.add_argument(
        "--lang",
        metavar="{" + ",".join(LANGUAGES) + "}",
        type=_language,
        help=_("the language of the table and the summary (default: LESSONS_LANG, else a "
               ".lessons-language file in the current folder, else English)"),
    )


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with its own word ("usage: ") in the current language too."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

    def _format_usage(self, usage, actions, groups, prefix):
        text = super()._format_usage(usage, actions, groups, prefix)
        from .claims import display_width

        # argparse indents the usage's continuation lines by len(prefix); a Chinese prefix is wider.
        extra = display_width(prefix) - len(prefix) if prefix else 0
        first, *rest = text.split("\n")
        return "\n".join([first, *(" " * extra + line if line.strip() else line for line in rest)])

    # Chinese has no spaces to wrap at and takes two columns a character: wrap it by display
    # columns, between characters (never inside a word or number). English is wrapped as before.
    def _split_lines(self, text, width):
        if text.isascii():
            return super()._split_lines(text, width)
        from .claims import wrap_cell

        return wrap_cell(" ".join(text.split()), width)

    def _fill_text(self, text, width, indent):
        if text.isascii():
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in self._split_lines(text, width - len(indent)))


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with its error line ("prog: error: argument --x: ...") translated.

    (argparse's own messages, such as "unrecognized arguments", stay English.)
    """

    def error(self, message):
        named = re.fullmatch(r"argument (.+?): (.*)", message, re.S)
        if named:
            message = _("argument {argument}: {message}").format(argument=named[1], message=named[2])
        self.print_usage(sys.stderr)
        self.exit(2, _("{prog}: error: {message}").format(prog=self.prog, message=message) + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m lessons.l13",
        description=_("Re-run lesson 13's experiments (RoPE) and check that every claim in "
                      "the notebooks holds. Exit status 0 when all hold, 1 otherwise."),
        formatter_class=_Formatter,
        add_help=False,
    )
    p = parser.add_argument_group(_("options"))  # the default group of the options, titled in the language
    p.add_argument("-h", "--help", action="help", help=_("show this help message and exit"))
    p.add_argument("--json", action="store_true", help=_("print the results as JSON"))
    p.add_argument(
        "--notebook",
        metavar="NN",
        type=_notebook,
        help=_("check only the claims of one notebook (3 or 03)"),
    )
    p.add_argument("--failed", action="store_true", help=_("list only the claims that fail (table or JSON)"))
    p.add_argument(
        "--fresh",
        action="store_true",
        help=_("train notebook 10's models again instead of reading the results stored by an "
               "earlier run of the same code (LESSONS_CACHE_DIR=off)"),
    )
    _lang_option(p)
    return parser


class _Quiet(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


def _chosen_language(argv: list[str] | None) -> str | None:
    """The ``--lang`` of ``argv`` if it is valid (read first: the help and the errors speak it).

    An invalid or missing value is left to the full parser, which reports it.
    """
    first = _Quiet(add_help=False)
    first.add_argument("--lang")
    try:
        value = first.parse_known_args(argv)[0].lang
    except ValueError:
        return None
    return i18n.normalize(value) if value in LANGUAGES else None


def main(argv: list[str] | None = None) -> int:
    with i18n.use_language(_chosen_language(argv)):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if not args.fresh:
        return _run(args)
    with results_cache.turned_off():
        return _run(args)


def _run(args) -> int:
    start = time.perf_counter()
    from .claims import all_claims, evaluate, summary

    claims = all_claims(args.notebook)
    if args.notebook is not None and not claims:
        known = ", ".join(sorted({c.notebook for c in all_claims()}))
        message = _("no claims for notebook {notebook!r}; notebooks with claims: {known}").format(
            notebook=args.notebook, known=known
        )
        print(f"python -m lessons.l13: {message}", file=sys.stderr)
        return 2
    if args.json:  # the values of the JSON stay English: the same schema in every language
        with i18n.use_language("en"):
            results = [evaluate(c) for c in claims]
    else:
        results = [evaluate(c) for c in claims]
    elapsed = time.perf_counter() - start
    failed = [r for r in results if not r.ok]
    status = 1 if failed else 0
    try:
        if args.json:
            _print_json(failed if args.failed else results, len(results) - len(failed), len(failed), elapsed)
        else:
            _print_table(failed if args.failed else results)
            seconds = f"{elapsed:.2f}"
            line = _("{summary} (checked in {seconds} s)").format(summary=summary(results), seconds=seconds)
            print("\n" + line)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped reading (``| head``): not an error. Python would report the
        # pipe again when it flushes stdout at exit, so point stdout at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return status


def _print_json(results, passed: int, failed: int, elapsed: float) -> None:
    language = i18n.language()
    with i18n.use_language("en"):
        computed = [r.computed_text() for r in results]
    payload = {
        "passed": passed,
        "failed": failed,
        "seconds": round(elapsed, 4),
        "language": language,
        "claims": [
            {
                "id": r.claim.id,
                "notebook": r.claim.notebook,
                "claim": r.claim.text,
                "text": r.claim.translated_text(),
                "stated": r.claim.stated_text(),
                "computed": shown,
                "tolerance": max(r.claim.tolerances()),
                "ok": r.ok,
                **({"error": r.error} if r.error else {}),
            }
            for r, shown in zip(results, computed, strict=True)
        ],
    }
    json.dump(payload, sys.stdout, indent=2)
    print()


def _print_table(results) -> None:
    from .claims import text_table

    width = min(shutil.get_terminal_size((100, 20)).columns, 200)
    notebooks = sorted({r.claim.notebook for r in results})
    for notebook in notebooks:
        print("\n" + _("notebook {notebook}").format(notebook=notebook))
        for line in text_table([r for r in results if r.claim.notebook == notebook], width):
            print(line)


if __name__ == "__main__":
    sys.exit(main())
