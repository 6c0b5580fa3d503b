"""apply_rope: rotate every coordinate pair of Q and K by its position's angle.

Introduced in ``notebooks/04_the_code.ipynb``; the layouts in
``notebooks/08_layouts_caches_and_failures.ipynb``.

Why it works (``02``): with R(phi) the 2D rotation, R(a)^T = R(-a) and R(a)R(b) = R(a+b), so

    (R(m w) q) . (R(n w) k) = q^T R(m w)^T R(n w) k = q^T R((n - m) w) k,

the score depends on the contents and on n - m only, that is on the distance m - n (query
minus key). Each pair of a head does this at its own frequency (``03``); lengths are kept
because rotations are orthogonal.

Two layouts pair the coordinates of a head differently:

* ``"interleaved"``: pairs (2i, 2i+1). RoFormer, Meta's LLaMA (a complex multiply of
  x[2i] + 1j*x[2i+1] by exp(1j*m*omega_i)), GPT-J. The main lesson uses it.
* ``"split_half"``: pairs (i, i + d/2). Hugging Face's Llama and GPT-NeoX:
  ``x*cos + rotate_half(x)*sin`` with rotate_half(x) = concat(-x2, x1).

They are the same rotation after a fixed permutation of the head dimensions:
x_split[t*d/2 + i] = x_interleaved[2i + t], t in {0, 1}.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._checks import (
    as_batch_positions,
    as_float_array,
    check_finite,
    check_layout,
    check_width,
)
from .frequencies import pair_frequencies

# --------------------------------------------------------------------------- the rotation


def _rotate_half(x):
    """[x1, x2] -> [-x2, x1] on the last axis: Hugging Face's ``rotate_half``.

    With pairs (j, j + d/2) it sends each pair (a, b) to (-b, a): a quarter turn.
    """
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def _rotate_split_half(x, cos, sin):
    """Pairs (j, j + d/2): ``x*cos + rotate_half(x)*sin``, Hugging Face's form.

    x [..., T, r]; cos, sin [..., T, r/2] in x's dtype.
    """
    cos = np.concatenate([cos, cos], axis=-1)  # [..., T, r]: pair j's angle for j and j + r/2
    sin = np.concatenate([sin, sin], axis=-1)
    return x * cos + _rotate_half(x) * sin  # (a, b) -> (a cos - b sin, b cos + a sin)


_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _rotate_interleaved(x, cos, sin):
    """Pairs (2i, 2i+1) as complex numbers x[2i] + 1j*x[2i+1], times e^(1j*angle): Meta's form.

    x [..., T, r], contiguous; cos, sin [..., T, r/2] in x's dtype.
    """
    z = x.view(_COMPLEX[x.dtype])  # [..., T, r/2]: the same memory read as complex numbers
    turned = z * (cos + 1j * sin)  # [..., T, r/2]: multiplying by e^(1j*angle) turns by angle
    return turned.view(x.dtype)  # [..., T, r]: back to (real, imaginary) pairs


def _rotate(x, cos, sin, layout, name):
    """Rotate the first r = 2 * cos.shape[-1] dims of x [..., T, d]; the rest pass through.

    ``x`` is a checked float32/float64 array, cos and sin [..., T, r/2] tables in its dtype.
    A NaN or infinity in ``x`` is reported as a ValueError naming ``name``; a finite ``x``
    whose result overflows, as one RuntimeWarning.
    """
    r = 2 * cos.shape[-1]
    rotate = _rotate_interleaved if layout == "interleaved" else _rotate_split_half
    with np.errstate(over="ignore", invalid="ignore"):  # reported below, once
        if r == x.shape[-1]:
            out = rotate(np.ascontiguousarray(x), cos, sin)
        else:
            rotated = rotate(np.ascontiguousarray(x[..., :r]), cos, sin)
            out = np.concatenate([rotated, x[..., r:]], axis=-1)
        # one pass over the result: NaN and infinities in x always reach it (the tables are
        # finite); a finite total that overflows only sends us to the exact check
        finite = np.isfinite(out.sum())
    if not finite:
        check_finite(x, name)
        if not np.isfinite(out).all():
            warnings.warn(
                f"overflow: rotating {name} gave infinite values (its largest magnitude is "
                f"{float(np.max(np.abs(x))):.3g}, near the limit of {x.dtype})",
                RuntimeWarning,
                stacklevel=3,
            )
    return out


# --------------------------------------------------------------------------- the public functions


def rope_frequencies(rotary_dim, base=None, inv_freq=None) -> np.ndarray:
    """The per-pair frequencies RoPE uses: base^(-2i/r), or ``inv_freq`` when given.

    ``base`` defaults to 10000. ``inv_freq`` (one frequency per pair, e.g. a long-context
    scaling from :mod:`lessons.scaling`) replaces the table ``base`` would build, so giving
    both is an error.
    """
    rotary_dim = check_width(rotary_dim, "rotary_dim")
    if inv_freq is None:
        return pair_frequencies(rotary_dim) if base is None else pair_frequencies(rotary_dim, base)
    if base is not None:
        raise ValueError(
            f"give base or inv_freq, not both: inv_freq replaces the frequencies base would "
            f"make; got base={base!r} and inv_freq"
        )
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    if inv_freq.shape != (rotary_dim // 2,):
        raise ValueError(
            f"inv_freq must hold one frequency per pair: expected shape ({rotary_dim // 2},) "
            f"for a rotary width of {rotary_dim}, got {inv_freq.shape}"
        )
    return inv_freq


def _check_rotary_dim(rotary_dim, d: int) -> int:
    if rotary_dim is None:
        return d
    rotary_dim = check_width(rotary_dim, "rotary_dim")
    if rotary_dim > d:
        raise ValueError(f"rotary_dim must be at most the head width {d}; got {rotary_dim}")
    return rotary_dim


def _cos_sin(x, what, positions, base, layout, rotary_dim, inv_freq):
    """Check the options of rope_rotate / apply_rope (once); return cos and sin in x's dtype.

    The tables have shape [T, r/2], or [B, 1, ..., T, r/2] for positions [B, T].
    """
    check_layout(layout)
    d = check_width(x.shape[-1], f"the last axis of {what} (head width)")
    inv_freq = rope_frequencies(_check_rotary_dim(rotary_dim, d), base, inv_freq)  # [r/2]
    if positions is None:
        positions = np.arange(x.shape[-2], dtype=np.float64)  # [T]: 0 .. T-1
    else:
        positions = as_batch_positions(positions, x.shape)  # [T] or [B, 1, ..., T]
    angles = positions[..., None] * inv_freq  # [T, r/2] or [B, 1, ..., T, r/2]
    return np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)


def rope_rotate(
    x,
    positions=None,
    *,
    base=None,
    layout="interleaved",
    rotary_dim=None,
    inv_freq=None,
) -> np.ndarray:
    """Rotate one tensor x [..., T, d] by the angles of ``positions`` (``04``, ``08``).

    Use it for keys entering a KV cache or a query at a later position; :func:`apply_rope`
    does Q and K together. ``positions`` is [T] (the same for every row; default 0 .. T-1)
    or [B, T], one row per entry of x's first axis (left padding, packed sequences).
    ``base`` defaults to 10000. With ``rotary_dim`` smaller than d, only the first
    ``rotary_dim`` dims are rotated and the rest pass through unchanged (GPT-NeoX
    ``rotary_pct``, GPT-J ``rotary_dim``). ``inv_freq`` replaces the table base^(-2i/d),
    e.g. by a long-context scaling from :mod:`lessons.scaling` (not together with ``base``).
    """
    x = as_float_array(x, "x", min_ndim=2, finite=False)
    cos, sin = _cos_sin(x, "x", positions, base, layout, rotary_dim, inv_freq)
    return _rotate(x, cos, sin, layout, "x")


def apply_rope(
    q,
    k,
    positions=None,
    *,
    base=None,
    layout="interleaved",
    rotary_dim=None,
    inv_freq=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rotate queries and keys of shape [B, H, T, d] (any leading axes) (``04``).

    Q and K must have the same shape; V is never rotated. ``positions`` is [T] or [B, T]
    (each batch entry its own positions). Returns ``(q_rotated, k_rotated)``, same shapes
    and dtype (float32 stays float32, the rest becomes float64). See :func:`rope_rotate`
    for the keyword arguments.

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
    cos, sin = _cos_sin(q, "q and k", positions, base, layout, rotary_dim, inv_freq)
    return _rotate(q, cos, sin, layout, "q"), _rotate(k, cos, sin, layout, "k")


# --------------------------------------------------------------------------- the two layouts


def interleaved_to_split_half_permutation(d) -> np.ndarray:
    """Index array ``perm`` with x_split = x_interleaved[..., perm] (``08``).

    perm = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]: the first coordinates of every pair, then
    the second ones. Converting Meta checkpoints to transformers permutes the rows of each
    head's slice of the q and k projections this way (never across the whole matrix: that
    mixes the heads; notebook 08).
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
