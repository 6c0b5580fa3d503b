"""Input checks shared by every module of the package.

Each check raises ``TypeError`` or ``ValueError`` with a message that names the argument,
says what was expected and shows what was given, so a learner knows what to fix.
"""

from __future__ import annotations

import numbers

import numpy as np

from .i18n import gettext as _

LAYOUTS = ("interleaved", "split_half")


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return _("an array of shape {shape} and dtype {dtype}").format(shape=value.shape, dtype=value.dtype)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def _one_per_token() -> str:
    return _("{name} must hold one position per token: expected {expected} (the T axis), got {count}")


def as_float_array(x, name: str, *, min_ndim: int = 1, finite: bool = True) -> np.ndarray:
    """Return ``x`` as a float array: float32 stays float32, everything else becomes float64.

    ``finite=False`` skips the NaN/inf check, for a caller that checks its result instead
    (see :func:`check_finite`).
    """
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(
            _("{name} must be an array of real numbers; got {what}").format(name=name, what=_describe(x))
        )
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and other things numpy refuses
        raise TypeError(
            _("{name} must be an array of real numbers; got {what}").format(name=name, what=_describe(x))
        ) from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_
    ):
        raise TypeError(
            _("{name} must hold real numbers; got dtype {dtype}").format(name=name, dtype=arr.dtype)
        )
    if arr.dtype != np.float32:
        arr = arr.astype(np.float64, copy=False)
    if arr.ndim < min_ndim:
        raise ValueError(
            _("{name} must have at least {count} dimension(s); got shape {shape}").format(
                name=name, count=min_ndim, shape=arr.shape
            )
        )
    if finite:
        check_finite(arr, name)
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise ValueError naming ``name`` when the float array holds NaN or infinite values."""
    # Without a temporary array: max and min are finite unless some element is not (NaN
    # propagates through both); only then count the culprits.
    if arr.size == 0 or (np.isfinite(arr.max()) and np.isfinite(arr.min())):
        return
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(finite.size - np.count_nonzero(finite))
        raise ValueError(
            _("{name} must be finite; it holds {count} NaN or infinite value(s)").format(name=name, count=bad)
        )


def check_width(d, name: str = "d") -> int:
    """A head (or rotary) width: a positive even integer."""
    if isinstance(d, bool) or not isinstance(d, numbers.Integral):
        raise TypeError(
            _("{name} must be a positive even integer; got {what}").format(name=name, what=_describe(d))
        )
    d = int(d)
    if d <= 0 or d % 2:
        raise ValueError(
            _(
                "{name} must be a positive even integer (coordinates are rotated in pairs); got {value}"
            ).format(name=name, value=d)
        )
    return d


def as_number(x, name: str) -> float:
    """A single finite real number (an angle, a position): an array of several is refused by name."""
    value = as_float_array(x, name, min_ndim=0)
    if value.ndim != 0:
        raise ValueError(_("{name} must be a single number; got an array of shape {shape}").format(
            name=name, shape=value.shape))
    return float(value)


def check_positive(value, name: str) -> float:
    """A finite real number greater than zero (a base, a scaling factor, a length)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            _("{name} must be a positive real number; got {what}").format(name=name, what=_describe(value))
        )
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(
            _("{name} must be a finite number greater than 0; got {value}").format(name=name, value=value)
        )
    return value


def check_at_least(value, minimum: float, name: str) -> float:
    value = check_positive(value, name)
    if value < minimum:
        raise ValueError(
            _("{name} must be at least {minimum}; got {value}").format(
                name=name, minimum=minimum, value=value
            )
        )
    return value


def check_base(value, name: str = "base") -> float:
    """A RoPE base: a finite real number greater than 1, so that each later pair turns slower."""
    value = check_positive(value, name)
    if value <= 1:
        raise ValueError(
            _("{name} must be greater than 1 (each later pair then turns slower); got {value}").format(
                name=name, value=value
            )
        )
    return value


def check_layout(layout) -> str:
    if layout not in LAYOUTS:
        raise ValueError(
            _("layout must be one of {layouts}; got {layout}").format(layouts=LAYOUTS, layout=repr(layout))
        )
    return layout


def as_positions(positions, name: str = "positions", length: int | None = None) -> np.ndarray:
    """Positions as a 1-D float64 array, of the given length when ``length`` is set."""
    arr = as_float_array(positions, name, min_ndim=0).astype(np.float64, copy=False)
    if arr.ndim != 1:
        raise ValueError(
            _("{name} must be one-dimensional (one position per token); got shape {shape}").format(
                name=name, shape=arr.shape
            )
        )
    if length is not None and arr.shape[0] != length:
        raise ValueError(_one_per_token().format(name=name, expected=length, count=arr.shape[0]))
    return arr


def as_batch_positions(positions, shape: tuple, name: str = "positions") -> np.ndarray:
    """Positions for a tensor of shape [..., T, d], shaped to broadcast against its [..., T].

    [T]: the same positions for every row, returned as float64 [T]. [B, T]: one row of
    positions per entry of the tensor's first (batch) axis, as transformers' position_ids
    (left padding, packed sequences); returned as [B, 1, ..., 1, T]. A single row [1, T]
    serves every batch entry.
    """
    arr = as_float_array(positions, name, min_ndim=0).astype(np.float64, copy=False)
    T = shape[-2]
    if arr.ndim not in (1, 2):
        raise ValueError(
            _(
                "{name} must have shape [T] (one position per token) or [B, T] (one row per "
                "batch entry); got shape {shape}"
            ).format(name=name, shape=arr.shape)
        )
    if arr.shape[-1] != T:
        if arr.ndim == 1:
            raise ValueError(_one_per_token().format(name=name, expected=T, count=arr.shape[-1]))
        raise ValueError(
            _(
                "{name} must hold one position per token: expected {expected} along the last (T) "
                "axis, got shape {shape}"
            ).format(name=name, expected=T, shape=arr.shape)
        )
    if arr.ndim == 1:
        return arr
    if len(shape) < 3:
        raise ValueError(
            _(
                "{name} of shape [B, T] need a batch axis: a tensor of shape [B, ..., T, d]; "
                "got shape {shape}"
            ).format(name=name, shape=tuple(shape))
        )
    if arr.shape[0] not in (1, shape[0]):
        if shape[0] == 1:
            text = _(
                "{name} of shape [B, T] must have one row per batch entry: expected "
                "{expected} (the first axis), got {count}"
            )
        else:
            text = _(
                "{name} of shape [B, T] must have one row per batch entry: expected "
                "{expected} (the first axis) or 1 (one row for all), got {count}"
            )
        raise ValueError(text.format(name=name, expected=shape[0], count=arr.shape[0]))
    return arr.reshape(arr.shape[0], *[1] * (len(shape) - 3), T)
