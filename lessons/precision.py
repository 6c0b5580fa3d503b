"""Angles in low precision: bfloat16 and float16, emulated in numpy.

Introduced in ``notebooks/08_layouts_caches_and_failures.ipynb``.

A floating-point number keeps a fixed count of significant bits: float32 keeps 24,
float16 keeps 11 and bfloat16 keeps 8. Between 2^k and 2^(k+1) it can only hold the
multiples of 2^(k + 1 - bits), so a large integer position lands on the nearest of them:

* bfloat16 near 4096: the step is 2^(12 + 1 - 8) = 32, so positions 4090 .. 4112 all become
  4096 (the neighbours 4088 and 4089 too: below 4096 the step is 16, and 4088 is a tie that
  rounds to the even 4096);
* float16 near 4096: the step is 4, so 4097 becomes 4096.

Neighbouring tokens then get the same rotation angle. This is why deployed RoPE code
computes ``positions * inv_freq`` and its cos/sin in float32 whatever the model's dtype.

numpy has no bfloat16. Its values are exactly the float32 values whose low 16 bits are
zero, so :func:`to_bfloat16` rounds a float32 to its top 16 bits, round-to-nearest-even, as
hardware and PyTorch's conversion do, and returns the result as float32.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_number, check_width
from .frequencies import DEFAULT_BASE, pair_frequencies

SIGNIFICANT_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def to_bfloat16(x) -> np.ndarray:
    """Round ``x`` to the nearest bfloat16 value (ties to even); returned as float32 (``08``).

    The value is first rounded to float32, then its bit pattern is rounded to the top 16
    bits. NaN stays NaN; values past bfloat16's largest finite value become infinite, as in
    a real conversion.

    >>> to_bfloat16([4090.0, 4100.0, 4112.0, 4113.0]).tolist()
    [4096.0, 4096.0, 4096.0, 4128.0]
    """
    x32 = np.asarray(as_float_array(x, "x", min_ndim=0, finite=False), dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1  # the last bit kept: ties go to the value whose kept bits are even
    rounded = ((bits + 0x7FFF + lsb) >> 16) << 16
    out = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    nan = np.isnan(x32)
    if np.any(nan):
        out = np.where(nan, np.float32(np.nan), out)
    return out


def to_float16(x) -> np.ndarray:
    """Round ``x`` to the nearest float16 value (numpy's own half type), as float32 (``08``).

    >>> to_float16([4096.0, 4097.0, 4098.0, 4099.0]).tolist()
    [4096.0, 4096.0, 4096.0, 4100.0]
    """
    x = as_float_array(x, "x", min_ndim=0, finite=False)
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float32)


_ROUNDERS = {
    "float64": lambda x: np.asarray(x, dtype=np.float64),
    "float32": lambda x: np.asarray(x, dtype=np.float32),
    "float16": to_float16,
    "bfloat16": to_bfloat16,
}


def round_to(x, dtype: str) -> np.ndarray:
    """Round ``x`` to ``dtype``: one of "float64", "float32", "float16", "bfloat16" (``08``)."""
    if dtype not in _ROUNDERS:
        raise ValueError(f"dtype must be one of {sorted(_ROUNDERS)}; got {dtype!r}")
    return _ROUNDERS[dtype](as_float_array(x, "x", min_ndim=0, finite=False))


def angles_in(dtype: str, positions, d, base=DEFAULT_BASE) -> np.ndarray:
    """The angle table [T, d/2] as code that works in ``dtype`` computes it (``08``).

    The positions and the frequencies are held in ``dtype`` and their product is rounded to
    ``dtype`` again, as a model that builds its angles from tensors of its own dtype does.
    The result is returned in float64, ready for :func:`rotate_with_angles`.
    """
    positions = as_float_array(positions, "positions", min_ndim=1)
    if positions.ndim != 1:
        raise ValueError(f"positions must be one-dimensional; got shape {positions.shape}")
    inv_freq = pair_frequencies(d, base)
    product = round_to(positions, dtype)[:, None].astype(np.float64) * round_to(inv_freq, dtype)[None, :]
    return round_to(product, dtype).astype(np.float64)


def rotate_with_angles(x, angles) -> np.ndarray:
    """Rotate the interleaved pairs of ``x`` [..., T, d] by an angle table [T, d/2] (``08``).

    Pair i of token t, (x[t, 2i], x[t, 2i+1]), turns by angles[t, i]: the rotation of
    :func:`lessons.rope.rope_rotate`, with angles given instead of positions (e.g. from
    :func:`angles_in`). Computed in float64.
    """
    x = as_float_array(x, "x", min_ndim=2).astype(np.float64, copy=False)
    angles = as_float_array(angles, "angles", min_ndim=2).astype(np.float64, copy=False)
    check_width(x.shape[-1], "the last axis of x (head width)")
    if angles.shape != (x.shape[-2], x.shape[-1] // 2):
        raise ValueError(
            f"angles must have shape (T, d/2) = {(x.shape[-2], x.shape[-1] // 2)} for x of shape "
            f"{x.shape}; got {angles.shape}"
        )
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def positions_rounding_to(value, dtype: str, search=64) -> np.ndarray:
    """The integer positions within ``search`` of ``value`` that ``dtype`` stores as ``value`` (``08``)."""
    value = as_number(value, "value")
    candidates = np.arange(int(value) - int(search), int(value) + int(search) + 1, dtype=np.float64)
    return candidates[round_to(candidates, dtype) == np.float32(value)].astype(np.int64)
