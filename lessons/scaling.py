"""Longer contexts: frequency scalings as deployed models compute them.

Introduced in ``notebooks/09_longer_contexts.ipynb``. Formulas follow Hugging Face
transformers' ``modeling_rope_utils.py`` (see shared REFERENCE_FORMULAS.md); every function
returns the per-pair frequencies (``inv_freq``) in float64, and YaRN also its attention factor.

* linear (position interpolation): omega / s, the same as using positions m / s.
* dynamic NTK: beyond the trained length M the base grows to
  theta * ((s L / M) - (s - 1))^(d / (d - 2)); within M nothing changes.
* YaRN: a per-pair ramp between keeping a pair (fast pairs) and dividing it by s
  (slow pairs), plus an attention temperature 0.1 ln(s) + 1 applied to cos and sin.
* Llama 3: pairs with short wavelengths kept, long ones divided by s, a smooth blend between.
* LongRoPE (Phi-3): every pair divided by its own searched factor, one list of factors up to
  the trained length and another beyond it, plus an attention factor
  sqrt(1 + ln(s) / ln(L)) applied to cos and sin.

Changing the base or the frequencies makes a different model: it must be the one the
weights were trained (or fine-tuned) with.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_array, check_at_least, check_base, check_positive, check_width
from .frequencies import DEFAULT_BASE, pair_frequencies


def linear_frequencies(d, factor, base=DEFAULT_BASE) -> np.ndarray:
    """Position interpolation: omega_i / s (``09``)."""
    factor = check_at_least(factor, 1.0, "factor")
    return pair_frequencies(d, base) / factor


def dynamic_ntk_base(d, factor, seq_len, max_position_embeddings, base=DEFAULT_BASE) -> float:
    """The grown base of dynamic NTK scaling for a sequence of ``seq_len`` tokens (``09``)."""
    d = check_width(d, "d")
    factor = check_at_least(factor, 1.0, "factor")
    base = check_base(base)
    seq_len = check_positive(seq_len, "seq_len")
    M = check_positive(max_position_embeddings, "max_position_embeddings")
    if seq_len <= M:
        return base
    if d == 2:
        raise ValueError("d must be at least 4 for dynamic NTK scaling (the exponent is d / (d - 2))")
    return base * ((factor * seq_len / M) - (factor - 1)) ** (d / (d - 2))


def dynamic_ntk_frequencies(d, factor, seq_len, max_position_embeddings, base=DEFAULT_BASE) -> np.ndarray:
    """Dynamic NTK frequencies: the default ones within M, a grown base beyond (``09``)."""
    return pair_frequencies(d, dynamic_ntk_base(d, factor, seq_len, max_position_embeddings, base))


def yarn_correction_dim(num_rotations, d, base, original_max_position_embeddings) -> float:
    """The (fractional) pair index whose wavelength fits ``num_rotations`` turns in L (``09``)."""
    d = check_width(d, "d")
    base = check_base(base)
    L = check_positive(original_max_position_embeddings, "original_max_position_embeddings")
    num_rotations = check_positive(num_rotations, "num_rotations")
    return (d * math.log(L / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def yarn_correction_range(
    d, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True
) -> tuple[float, float]:
    """(low, high): pairs below ``low`` keep their frequency, above ``high`` are divided by s."""
    d = check_width(d, "d")
    base = check_base(base)
    L = check_positive(original_max_position_embeddings, "original_max_position_embeddings")
    beta_fast = check_positive(beta_fast, "beta_fast")
    beta_slow = check_positive(beta_slow, "beta_slow")
    if beta_fast <= beta_slow:
        raise ValueError(
            f"beta_fast (turns over the trained length above which a pair is kept) must be greater "
            f"than beta_slow (below which it is divided by s); got {beta_fast:g} and {beta_slow:g}"
        )
    low = yarn_correction_dim(beta_fast, d, base, L)
    high = yarn_correction_dim(beta_slow, d, base, L)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, d - 1)


def yarn_ramp(low, high, n_pairs) -> np.ndarray:
    """clamp((i - low) / (high - low), 0, 1): 0 keeps a pair, 1 interpolates it fully."""
    if low == high:
        high += 0.001
    return np.clip((np.arange(n_pairs, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def yarn_attention_factor(factor, mscale=None, mscale_all_dim=None) -> float:
    """YaRN's attention temperature: 0.1 ln(s) + 1, or the ratio of two mscales (``09``)."""

    def _mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    factor = check_positive(factor, "factor")
    if mscale and mscale_all_dim:
        return _mscale(factor, mscale) / _mscale(factor, mscale_all_dim)
    return _mscale(factor)


def yarn_frequencies(
    d,
    factor,
    original_max_position_embeddings,
    base=DEFAULT_BASE,
    *,
    beta_fast=32.0,
    beta_slow=1.0,
    truncate=True,
    mscale=None,
    mscale_all_dim=None,
) -> tuple[np.ndarray, float]:
    """YaRN: ``(inv_freq, attention_factor)`` (``09``).

    inv_freq[i] = omega_i (1 - ramp[i]) + (omega_i / s) ramp[i]. Hugging Face multiplies
    both cos and sin by the attention factor, so attention logits scale by its square.
    """
    d = check_width(d, "d")
    factor = check_at_least(factor, 1.0, "factor")
    default = pair_frequencies(d, base)
    low, high = yarn_correction_range(
        d, base, original_max_position_embeddings, beta_fast, beta_slow, truncate
    )
    ramp = yarn_ramp(low, high, d // 2)
    inv_freq = default * (1.0 - ramp) + (default / factor) * ramp
    return inv_freq, yarn_attention_factor(factor, mscale, mscale_all_dim)


def llama3_frequencies(
    d,
    factor,
    base=DEFAULT_BASE,
    *,
    low_freq_factor=1.0,
    high_freq_factor=4.0,
    original_max_position_embeddings=8192,
) -> np.ndarray:
    """Llama 3's smoothed scaling (``09``).

    wavelength < L / high_freq_factor: unchanged; > L / low_freq_factor: divided by s;
    between: (1 - smooth) omega / s + smooth omega with smooth = (L / wavelength - a) / (b - a).
    """
    factor = check_at_least(factor, 1.0, "factor")
    a = check_positive(low_freq_factor, "low_freq_factor")
    b = check_positive(high_freq_factor, "high_freq_factor")
    if b <= a:
        raise ValueError(
            f"high_freq_factor must be greater than low_freq_factor; got {b} and {a}"
        )
    L = check_positive(original_max_position_embeddings, "original_max_position_embeddings")
    inv = pair_frequencies(d, base)
    wavelen = 2 * math.pi / inv
    smooth = (L / wavelen - a) / (b - a)
    blended = (1 - smooth) * inv / factor + smooth * inv
    out = np.where(wavelen > L / a, inv / factor, inv)
    medium = (wavelen >= L / b) & (wavelen <= L / a)
    return np.where(medium, blended, out)


def longrope_frequencies(
    d,
    short_factor,
    long_factor,
    seq_len,
    original_max_position_embeddings,
    base=DEFAULT_BASE,
    *,
    max_position_embeddings=None,
    factor=None,
    attention_factor=None,
) -> tuple[np.ndarray, float]:
    """LongRoPE (Phi-3): ``(inv_freq, attention_factor)`` for a sequence of ``seq_len`` tokens (``09``).

    Each pair has its own rescale factor: inv_freq[i] = omega_i / short_factor[i] while
    ``seq_len`` <= L (``original_max_position_embeddings``, the trained length), and
    omega_i / long_factor[i] beyond it. The factors (d/2 of each) were searched for, not
    computed; a model's config lists them.

    The attention factor is ``attention_factor`` when given, else sqrt(1 + ln(s) / ln(L))
    (1 when s <= 1), with s = ``factor`` or, when ``factor`` is not given,
    ``max_position_embeddings`` / L (Phi-3's configs give only the two lengths; when both
    are given, ``factor`` is used). Like YaRN's, it multiplies cos and sin.
    """
    d = check_width(d, "d")
    base = check_base(base)
    seq_len = check_positive(seq_len, "seq_len")
    L = check_positive(original_max_position_embeddings, "original_max_position_embeddings")
    rescale = {}
    for name, value in (("short_factor", short_factor), ("long_factor", long_factor)):
        value = as_float_array(value, name).astype(np.float64, copy=False)
        if value.shape != (d // 2,) or np.any(value <= 0):
            raise ValueError(
                f"{name} must hold d/2 = {d // 2} positive numbers, one per pair; "
                f"got shape {value.shape}" + (" with a value <= 0" if np.any(value <= 0) else "")
            )
        rescale[name] = value
    if factor is None:
        if max_position_embeddings is None:
            raise ValueError(
                "give factor, or max_position_embeddings for factor = "
                "max_position_embeddings / original_max_position_embeddings"
            )
        factor = check_positive(max_position_embeddings, "max_position_embeddings") / L
    factor = check_positive(factor, "factor")
    if attention_factor is None:
        if factor > 1 and L <= 1:
            raise ValueError(
                "original_max_position_embeddings must be greater than 1 for the default "
                f"attention factor sqrt(1 + ln(s) / ln(L)); got {L}"
            )
        attention_factor = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(L))
    attention_factor = check_positive(attention_factor, "attention_factor")
    per_pair = rescale["long_factor"] if seq_len > L else rescale["short_factor"]
    return pair_frequencies(d, base) / per_pair, attention_factor


def ntk_aware_base(d, factor, base=DEFAULT_BASE) -> float:
    """The NTK-aware base theta * s^(d / (d - 2)) for a fixed factor s (``09``).

    It keeps pair 0 (frequency 1 at any base) and divides the last pair's frequency by
    exactly s; the pairs between are divided by a factor that grows with i. It is the
    dynamic NTK base at the length where (s L / M) - (s - 1) = s.
    """
    d = check_width(d, "d")
    factor = check_at_least(factor, 1.0, "factor")
    base = check_base(base)
    if d == 2:
        raise ValueError("d must be at least 4 for NTK-aware scaling (the exponent is d / (d - 2))")
    return base * factor ** (d / (d - 2))


def ntk_aware_frequencies(d, factor, base=DEFAULT_BASE) -> np.ndarray:
    """NTK-aware frequencies: the default table at the grown base (``09``)."""
    return pair_frequencies(d, ntk_aware_base(d, factor, base))


def angle_range(inv_freq, length) -> np.ndarray:
    """The angle each pair turns across ``length`` positions: length * omega_i (``09``).

    Over a context of ``length`` tokens the relative angles of pair i run from 0 to about
    this value (distances 0 .. length - 1).
    """
    return _angle_range(inv_freq, length, "inv_freq", "length")


def _angle_range(inv_freq, length, freq_name: str, length_name: str) -> np.ndarray:
    length = check_positive(length, length_name)
    inv_freq = as_float_array(inv_freq, freq_name, finite=False).astype(np.float64)
    if inv_freq.ndim != 1 or not np.all(np.isfinite(inv_freq)) or np.any(inv_freq <= 0):
        raise ValueError(
            f"{freq_name} must be a 1-D array of positive finite frequencies; got shape {inv_freq.shape}"
        )
    return length * inv_freq


def unseen_angle_pairs(trained_inv_freq, trained_length, inv_freq, length) -> np.ndarray:
    """Boolean mask of the pairs that meet angles training never showed them (``08``, ``09``).

    A pair whose training range reached a full turn (2 pi) has seen every relative angle; the
    others saw only 0 .. L * omega. Running ``length`` positions with ``inv_freq`` takes such a
    pair past its trained range when length * omega' > L * omega (relative tolerance 1e-9).
    """
    trained = _angle_range(trained_inv_freq, trained_length, "trained_inv_freq", "trained_length")
    used = _angle_range(inv_freq, length, "inv_freq", "length")
    if used.shape != trained.shape:
        raise ValueError(
            f"inv_freq must have one frequency per pair, like trained_inv_freq {trained.shape}; "
            f"got {used.shape}"
        )
    return (trained < 2 * np.pi) & (used > trained * (1 + 1e-9))
