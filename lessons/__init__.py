"""Lesson 13 of "write a small model by hand": rotary position embedding (RoPE).

The notebooks in ``notebooks/`` import their helpers from here. One module per idea:

* :mod:`lessons.rotation` — turning a 2D arrow (01, 02)
* :mod:`lessons.frequencies` — the per-pair frequency and angle tables (03)
* :mod:`lessons.rope` — ``apply_rope`` on [B, H, T, d], layouts (04, 08)
* :mod:`lessons.attention` — a small attention read, with or without RoPE (01, 05)
* :mod:`lessons.sinusoidal` — the original Transformer's added encoding (07)
* :mod:`lessons.kv_cache` — positions with a KV cache (08)
* :mod:`lessons.scaling` — long-context frequency scalings (09)
* :mod:`lessons.claims` — every claim of the lesson; ``python -m lessons.l13`` checks them
"""

__version__ = "0.1.0"
