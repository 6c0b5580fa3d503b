"""apply_rope: rotate every coordinate pair of Q and K by its position's angle.

Introduced in ``notebooks/04_the_code.ipynb``; the layouts in
``notebooks/08_layouts_caches_and_failures.ipynb``.

Why it works (``02``): with R(phi) the 2D rotation, R(a)^T = R(-a) and R(a)R(b) = R(a+b), so

    (R(m w) q) . (R(n w) k) = q^T R(m w)^T R(n w) k = q^T R((n - m) w) k,

the score depends on the contents and on the distance n - m only. Each pair of a head
does this at its own frequency (``03``); lengths are kept because rotations are orthogonal.

Two layouts pair the coordinates of a head differently:

* ``"interleaved"``: pairs (2i, 2i+1). RoFormer, Meta's LLaMA (a complex multiply of
  x[2i] + 1j*x[2i+1] by exp(1j*m*omega_i)), GPT-J. The main lesson uses it.
* ``"split_half"``: pairs (i, i + d/2). Hugging Face's Llama and GPT-NeoX:
  ``x*cos + rotate_half(x)*sin`` with rotate_half(x) = concat(-x2, x1).

They are the same rotation after a fixed permutation of the head dimensions:
x_split[t*d/2 + i] = x_interleaved[2i + t], t in {0, 1}.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._checks import (
    as_float_array,
    as_positions,
    check_finite,
    check_layout,
    check_positive,
    check_width,
)
from .frequencies import DEFAULT_BASE, angle_table, pair_frequencies


def _resolve_inv_freq(rotary_dim: int, base, inv_freq) -> np.ndarray:
    if inv_freq is None:
        return pair_frequencies(rotary_dim, base)
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    if inv_freq.shape != (rotary_dim // 2,):
        raise ValueError(
            f"inv_freq must hold one frequency per pair: expected shape ({rotary_dim // 2},) "
            f"for a rotary width of {rotary_dim}, got {inv_freq.shape}"
        )
    return inv_freq


def rotate_pairs(x, angles, layout="interleaved") -> np.ndarray:
    """Rotate the coordinate pairs of ``x`` [..., T, d] by ``angles`` [T, d/2] (``04``).

    The whole last axis is rotated; see :func:`rope_rotate` for a partial rotary width.
    float32 in gives float32 out; anything else is computed in float64.
    """
    x = as_float_array(x, "x", min_ndim=2, finite=False)
    check_layout(layout)
    d = check_width(x.shape[-1], "the last axis of x (head width)")
    angles = as_float_array(angles, "angles", min_ndim=0).astype(np.float64, copy=False)
    if angles.shape != (x.shape[-2], d // 2):
        raise ValueError(
            f"angles must have shape (T, d/2) = {(x.shape[-2], d // 2)} for x of shape "
            f"{x.shape}; got {angles.shape}"
        )
    return _rotate(x, np.cos(angles), np.sin(angles), layout, "x")


# Rows are rotated in blocks of about this many bytes, so that the few temporaries of a
# block stay in the CPU cache: the whole tensor is read once and written once.
_BLOCK_BYTES = 1 << 18


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str, name: str) -> np.ndarray:
    """Rotate the first 2*cos.shape[-1] dims of x [..., T, d] with cos/sin tables [T, r/2].

    The remaining dims pass through. ``x`` is a float32 or float64 array whose shapes were
    checked; its finiteness is checked here, on the way (ValueError naming ``name``).

    * interleaved: pairs (2i, 2i+1) viewed as complex numbers x[2i] + 1j*x[2i+1] and
      multiplied by exp(1j*angle) = cos + 1j*sin, Meta's form, one pass;
    * split_half: ``x*cos + rotate_half(x)*sin`` with tables of width r, cos = [cos, cos] and
      sin = [-sin, sin] (the minus of rotate_half folded in), Hugging Face's form.
    """
    dtype = x.dtype
    shape = x.shape
    T, d = shape[-2], shape[-1]
    half = cos.shape[-1]
    r = 2 * half
    xf = np.ascontiguousarray(x).reshape(math.prod(shape[:-2]), T, d)
    out = np.empty(xf.shape, dtype=dtype)
    if layout == "interleaved":
        complex_dtype = np.complex64 if dtype == np.float32 else np.complex128
        turn = np.empty(cos.shape, dtype=complex_dtype)
        turn.real, turn.imag = cos, sin
    else:
        cos_full = np.concatenate([cos, cos], axis=-1).astype(dtype, copy=False)
        sin_full = np.concatenate([-sin, sin], axis=-1).astype(dtype, copy=False)
    rows = max(1, min(T, _BLOCK_BYTES // (d * dtype.itemsize)))
    tmp = np.empty((rows, 2, half), dtype=dtype)
    finite = True
    # inf * 0 in a non-finite x is reported below as an error, and an overflow as one warning
    with np.errstate(invalid="ignore", over="ignore"):
        for n in range(xf.shape[0]):
            for a in range(0, T, rows):
                b = min(a + rows, T)
                xs, o = xf[n, a:b, :r], out[n, a:b, :r]
                if layout == "interleaved":
                    zo = o.view(complex_dtype)
                    np.multiply(xs.view(complex_dtype), turn[a:b], out=zo)
                else:
                    # the second half times sin of the first, the first half times sin of the second
                    swapped = xs.reshape(b - a, 2, half)[:, ::-1]
                    t = tmp[: b - a]
                    np.multiply(xs, cos_full[a:b], out=o)
                    np.multiply(swapped, sin_full[a:b].reshape(b - a, 2, half), out=t)
                    np.add(o, t.reshape(b - a, r), out=o)
                if r < d:
                    out[n, a:b, r:] = xf[n, a:b, r:]
                    o = out[n, a:b]
                # the sum of the block (still in cache) is finite unless an element is not (NaN
                # and infinities propagate); a finite sum that overflows only sends us to the
                # exact check below
                finite = finite and bool(np.isfinite(o.sum()))
    if not finite:
        # A NaN or infinity in x always reaches the output; a finite x may still overflow.
        check_finite(x, name)
        if not np.isfinite(out).all():
            warnings.warn(
                f"overflow: rotating {name} gave infinite values (its largest magnitude is "
                f"{float(np.max(np.abs(x))):.3g}, near the limit of {dtype})",
                RuntimeWarning,
                stacklevel=3,
            )
    return out.reshape(shape)


def _angles_cos_sin(T, positions, rotary_dim, base, inv_freq) -> tuple[np.ndarray, np.ndarray]:
    positions = (
        np.arange(T, dtype=np.float64) if positions is None else as_positions(positions, length=T)
    )
    angles = angle_table(positions, _resolve_inv_freq(rotary_dim, base, inv_freq))
    return np.cos(angles), np.sin(angles)


def _check_rotary_dim(rotary_dim, d: int) -> int:
    if rotary_dim is None:
        return d
    rotary_dim = check_width(rotary_dim, "rotary_dim")
    if rotary_dim > d:
        raise ValueError(f"rotary_dim must be at most the head width {d}; got {rotary_dim}")
    return rotary_dim


def rope_rotate(
    x,
    positions=None,
    *,
    base=DEFAULT_BASE,
    layout="interleaved",
    rotary_dim=None,
    inv_freq=None,
) -> np.ndarray:
    """Rotate one tensor x [..., T, d] by the angles of ``positions`` (``04``, ``08``).

    Use it for keys entering a KV cache or a query at a later position; :func:`apply_rope`
    calls it for Q and K together. ``positions`` defaults to 0 .. T-1. With ``rotary_dim``
    smaller than d, only the first ``rotary_dim`` dims are rotated and the rest pass
    through unchanged (GPT-NeoX ``rotary_pct``, GPT-J ``rotary_dim``). ``inv_freq``
    replaces the default table, e.g. by a long-context scaling from :mod:`lessons.scaling`.
    """
    x = as_float_array(x, "x", min_ndim=2, finite=False)
    check_layout(layout)
    d = check_width(x.shape[-1], "the last axis of x (head width)")
    rotary_dim = _check_rotary_dim(rotary_dim, d)
    check_positive(base, "base")
    cos, sin = _angles_cos_sin(x.shape[-2], positions, rotary_dim, base, inv_freq)
    return _rotate(x, cos, sin, layout, "x")


def apply_rope(
    q,
    k,
    positions=None,
    *,
    base=DEFAULT_BASE,
    layout="interleaved",
    rotary_dim=None,
    inv_freq=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rotate queries and keys of shape [B, H, T, d] (any leading axes) (``04``).

    Q and K must have the same shape; V is never rotated. Returns ``(q_rotated,
    k_rotated)``, same shapes and dtype (float32 stays float32, the rest becomes float64).
    See :func:`rope_rotate` for the keyword arguments.

    >>> import numpy as np
    >>> q = k = np.array([[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]])   # [H=1, T=3, d=2]
    >>> qr, kr = apply_rope(q, k)
    >>> np.round(qr[0] @ kr[0].T, 8)[0]
    array([ 1.        ,  0.54030231, -0.41614684])
    """
    q = as_float_array(q, "q", min_ndim=2, finite=False)
    k = as_float_array(k, "k", min_ndim=2, finite=False)
    if q.shape != k.shape:
        raise ValueError(
            f"q and k must have the same shape [B, H, T, d]; got q {q.shape} and k {k.shape}"
        )
    if q.dtype != k.dtype:
        raise TypeError(f"q and k must have the same dtype; got q {q.dtype} and k {k.dtype}")
    check_layout(layout)
    d = check_width(q.shape[-1], "the last axis of q and k (head width)")
    rotary_dim = _check_rotary_dim(rotary_dim, d)
    check_positive(base, "base")
    cos, sin = _angles_cos_sin(q.shape[-2], positions, rotary_dim, base, inv_freq)
    return _rotate(q, cos, sin, layout, "q"), _rotate(k, cos, sin, layout, "k")


def interleaved_to_split_half_permutation(d) -> np.ndarray:
    """Index array ``perm`` with x_split = x_interleaved[..., perm] (``08``).

    perm = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]: the first coordinates of every pair, then
    the second ones. Converting Meta checkpoints to transformers permutes the rows of the
    q and k projections this way.
    """
    d = check_width(d, "d")
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def split_half_to_interleaved_permutation(d) -> np.ndarray:
    """Index array with x_interleaved = x_split[..., perm]: the inverse permutation (``08``)."""
    return np.argsort(interleaved_to_split_half_permutation(d))


def interleaved_to_split_half(x) -> np.ndarray:
    """Reorder the last axis from interleaved pairs to split-half pairs (``08``)."""
    x = as_float_array(x, "x")
    return x[..., interleaved_to_split_half_permutation(x.shape[-1])]


def split_half_to_interleaved(x) -> np.ndarray:
    """Reorder the last axis from split-half pairs to interleaved pairs (``08``)."""
    x = as_float_array(x, "x")
    return x[..., split_half_to_interleaved_permutation(x.shape[-1])]
