"""How fast is ``apply_rope``? Timed against the memory-bound floor: a plain numpy copy.

    python benchmarks/bench_apply_rope.py                 # [1, 32, 4096, 128], best of 7
    python benchmarks/bench_apply_rope.py --shape 1 8 1024 64 --repeat 20

RoPE reads Q and K once and writes them once, like ``q.copy(), k.copy()``, so that copy is
the floor no elementwise implementation can beat. For each dtype and layout the script
prints the best time of ``--repeat`` runs (timeit-style, one call per run, the floor and
the layouts taking turns) and that time as a multiple of the floor's best time, and the
memory one ``rope_rotate`` call holds at its peak, in sizes of its input (the result
included; numpy reports its allocations to ``tracemalloc``). The package computes RoPE in
its plain form, as notebook 04 derives it, not a tuned one: the goals are at most 6x the
copy and at most 3 full-size temporaries. Times depend on the machine and on what else it
is running; the ratio is the figure to compare.
"""

from __future__ import annotations

import argparse
import os
import platform
import timeit
import tracemalloc

import numpy as np

from lessons.rope import apply_rope, rope_rotate

LAYOUTS = ("interleaved", "split_half")
DTYPES = (np.float32, np.float64)
TARGET = 6.0
MAX_TEMPORARIES = 3


def best_times(fns: dict, repeat: int) -> dict:
    """The best of ``repeat`` single calls of each function, in seconds.

    The functions take turns (one call each per round), so a busy spell on the machine
    slows the floor and the measured calls alike instead of skewing their ratio.
    """
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(timeit.Timer(fn).timeit(number=1))
    return {name: min(ts) for name, ts in times.items()}


def peak_memory(fn) -> int:
    """The most memory numpy held at once during ``fn()``, in bytes (its result included)."""
    tracemalloc.start()
    try:
        result = fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        del result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shape", type=int, nargs=4, default=[1, 32, 4096, 128], metavar=("B", "H", "T", "d")
    )
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement (the best is kept)")
    args = parser.parse_args(argv)
    shape = tuple(args.shape)

    print(f"apply_rope on q and k of shape {list(shape)}, best of {args.repeat}")
    print(f"numpy {np.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPU(s)")
    print()
    print(f"{'dtype':<9}{'layout':<13}{'apply_rope':>12}{'copy floor':>12}{'x floor':>9}{'peak memory':>14}")
    rng = np.random.default_rng(0)
    worst = 0.0
    most_memory = 0.0
    for dtype in DTYPES:
        q = rng.standard_normal(shape).astype(dtype)
        k = rng.standard_normal(shape).astype(dtype)
        for layout in LAYOUTS:  # warm up, and check the result's type
            qr, kr = apply_rope(q, k, layout=layout)
            assert qr.dtype == kr.dtype == dtype and qr.shape == shape
            del qr, kr
        fns = {"floor": lambda q=q, k=k: (q.copy(), k.copy())}
        for layout in LAYOUTS:
            fns[layout] = lambda q=q, k=k, layout=layout: apply_rope(q, k, layout=layout)
        best = best_times(fns, args.repeat)
        floor = best["floor"]
        for layout in LAYOUTS:
            t = best[layout]
            ratio = t / floor
            worst = max(worst, ratio)
            memory = peak_memory(lambda q=q, layout=layout: rope_rotate(q, layout=layout)) / q.nbytes
            most_memory = max(most_memory, memory)
            print(
                f"{np.dtype(dtype).name:<9}{layout:<13}{t * 1e3:>9.3g} ms{floor * 1e3:>9.3g} ms"
                f"{ratio:>8.2f}x{memory:>10.2f} x q"
            )
        del q, k
    print()
    verdict = "within" if worst <= TARGET else "ABOVE"
    print(f"slowest: {worst:.2f}x the copy floor ({verdict} the {TARGET:.0f}x goal)")
    # the result is one of the arrays held; the others are temporaries
    verdict = "within" if most_memory - 1 <= MAX_TEMPORARIES else "ABOVE"
    print(
        f"most memory held by one rope_rotate: {most_memory:.2f}x its input, the result and "
        f"{most_memory - 1:.2f} full-size temporaries ({verdict} the goal of {MAX_TEMPORARIES})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
