"""How long does a notebook take to print a figure? ``savefig`` against one draw (``png_bytes``).

    python benchmarks/bench_figures.py              # every figure helper that needs no data, best of 5
    python benchmarks/bench_figures.py --repeat 10
    python benchmarks/bench_figures.py --titles     # titles fixed at the top against matplotlib's search

A figure with a layout engine (the course's use constrained layout) is drawn twice by
``savefig``: once without rendering, to place things, then for real, though the engine runs
inside the real draw anyway. :func:`lessons.figures.style.png_bytes` lets Agg draw it once; a
notebook's inline figures and the sliders' pictures come through it. For each figure the
script prints the best CPU time of ``--repeat`` prints each way (the two taking turns, each
on a new figure), whether the PNG bytes are the same, and the totals with their ratio.
Times depend on the machine and on what else it is running; the ratio is the figure to compare.

``--titles`` compares instead two ways of placing axes titles, both printed by ``png_bytes``:
the house style's (``axes.titley`` 1.0, the top of the axes) and matplotlib's default
(``None``: at each draw, measure the x axis and the offset text of every axes to lift a
title over ticks at the top). The bytes must be the same: no course figure has ticks there.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import os
import pkgutil
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import lessons.figures  # noqa: E402
from lessons.figures.style import png_bytes  # noqa: E402


def figure_helpers() -> list:
    """Every ``*_figure`` function of ``lessons.figures`` that draws without being given data."""
    found = []
    for info in pkgutil.iter_modules(lessons.figures.__path__):
        if info.name == "style":  # the house style: new_figure makes axes to draw in, not a figure
            continue
        module = importlib.import_module(f"lessons.figures.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__ or not name.endswith("_figure"):
                continue
            variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            parameters = inspect.signature(function).parameters.values()
            if all(p.default is not p.empty or p.kind in variadic for p in parameters):
                found.append(function)
    return found


def savefig_png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def best_cpu_seconds(make, prints: dict, repeat: int) -> tuple[dict[str, float], dict[str, bytes]]:
    """The best CPU time of each way of printing a new figure from ``make``, taking turns.

    ``prints`` maps a name to ``(rc, print_png)``: the figure is made under the rcParams ``rc``
    (matplotlib reads some, such as ``axes.titley``, when it makes the axes) and printed by
    ``print_png``.
    """
    best = dict.fromkeys(prints, float("inf"))
    data: dict[str, bytes] = {}
    for _ in range(repeat):
        for name, (rc, print_png) in prints.items():
            with matplotlib.rc_context(rc):
                fig = make()
                start = time.process_time()
                data[name] = print_png(fig)
                best[name] = min(best[name], time.process_time() - start)
            plt.close(fig)
    return best, data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="prints of each figure each way (the best is kept)")
    parser.add_argument("--titles", action="store_true",
                        help="compare titles fixed at the top (the house style) with matplotlib's search")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    if args.titles:
        prints = {"fixed": ({}, png_bytes), "searched": ({"axes.titley": None}, png_bytes)}
    else:
        prints = {"savefig": ({}, savefig_png), "png_bytes": ({}, png_bytes)}
    first, second = prints
    figures = figure_helpers()
    for make in figures:  # warm up: fonts, the mathtext parser, first-use caches
        plt.close(make())
    totals = dict.fromkeys(prints, 0.0)
    all_same = True
    print(f"{len(figures)} figures, best CPU time of {args.repeat}, {os.cpu_count()} CPU(s)")
    print(f"  {'figure':<28} {first:>9} {second:>10}  same bytes")
    for make in figures:
        best, data = best_cpu_seconds(make, prints, args.repeat)
        same = data[first] == data[second]
        all_same &= same
        for name in prints:
            totals[name] += best[name]
        print(f"  {make.__name__:<28} {best[first]:8.3f}s {best[second]:9.3f}s  "
              f"{'yes' if same else 'NO'}")
    print(f"  {'total':<28} {totals[first]:8.3f}s {totals[second]:9.3f}s  "
          f"{second} takes {totals[second] / totals[first]:.2f}x the time of {first}")
    return 0 if all_same else 1


if __name__ == "__main__":
    raise SystemExit(main())
