"""How fast is ``apply_rope``? Timed against the memory-bound floor: a plain numpy copy.

    python benchmarks/bench_apply_rope.py                 # [1, 32, 4096, 128], best of 7
    python benchmarks/bench_apply_rope.py --shape 1 8 1024 64 --repeat 20

RoPE reads Q and K once and writes them once, like ``q.copy(), k.copy()``, so that copy is
the floor no elementwise implementation can beat. For each dtype and layout the script
prints the best time of ``--repeat`` runs (timeit-style, one call per run, the floor and
the layouts taking turns) and that time as a multiple of the floor's best time. The goal is
at most 3x. Times depend on the machine and on what else it is running; the ratio is the
figure to compare.
"""

from __future__ import annotations

import argparse
import os
import platform
import timeit

import numpy as np

from lessons.rope import apply_rope

LAYOUTS = ("interleaved", "split_half")
DTYPES = (np.float32, np.float64)
TARGET = 3.0


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
    print(f"{'dtype':<9}{'layout':<13}{'apply_rope':>12}{'copy floor':>12}{'x floor':>9}")
    rng = np.random.default_rng(0)
    worst = 0.0
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
            print(
                f"{np.dtype(dtype).name:<9}{layout:<13}{t * 1e3:>9.3g} ms{floor * 1e3:>9.3g} ms{ratio:>8.2f}x"
            )
        del q, k
    print()
    verdict = "within" if worst <= TARGET else "ABOVE"
    print(f"slowest: {worst:.2f}x the copy floor ({verdict} the {TARGET:.0f}x goal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
