"""Positions with a KV cache: where the next token really is.

Introduced in ``notebooks/08_layouts_caches_and_failures.ipynb``.

Keys are rotated once, before they enter the cache. A step that adds ``n_new`` tokens
after ``cache_length`` cached ones puts them at positions cache_length .. cache_length +
n_new - 1 (transformers: arange(new) + cache length; Meta: the table slice
[start_pos : start_pos + seqlen]). Two silent mistakes keep every shape: resetting the new
query to position 0, and rotating an already-rotated cached key again.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._checks import _describe, as_float_array, check_layout, check_width
from .rope import rope_frequencies, rope_rotate


def continuation_positions(cache_length, n_new=1) -> np.ndarray:
    """Positions of ``n_new`` tokens that follow ``cache_length`` cached ones (``08``).

    ``cache_length`` is an integer (result [n_new]) or one count per batch row [B] (result
    [B, n_new]): in a left-padded batch each row continues after its own real tokens,
    the count of 1s in its attention mask.
    """
    if isinstance(n_new, bool) or not isinstance(n_new, numbers.Integral):
        raise TypeError(f"n_new must be an integer; got {_describe(n_new)}")
    if n_new < 1:
        raise ValueError(f"n_new must be at least 1; got {n_new}")
    if isinstance(cache_length, (list, tuple, np.ndarray)):
        lengths = np.asarray(cache_length)
        if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or lengths.dtype == bool:
            raise TypeError(
                f"cache_length must be an integer or a 1-D array of integers (one per row); "
                f"got {_describe(cache_length)}"
            )
        if lengths.size and lengths.min() < 0:
            raise ValueError(f"cache_length must be at least 0; got {int(lengths.min())}")
        return lengths.astype(np.int64)[:, None] + np.arange(n_new, dtype=np.int64)  # [B, n_new]
    if isinstance(cache_length, bool) or not isinstance(cache_length, numbers.Integral):
        raise TypeError(f"cache_length must be an integer; got {_describe(cache_length)}")
    if cache_length < 0:
        raise ValueError(f"cache_length must be at least 0; got {cache_length}")
    return np.arange(cache_length, cache_length + n_new, dtype=np.int64)


def positions_from_attention_mask(attention_mask) -> np.ndarray:
    """Positions for left-padded batches as ``generate()`` builds them (``08``).

    ``attention_mask`` is [T] or [B, T] (1 = a real token, 0 = padding); the result has
    the same shape. Each row counts its real tokens from 0: cumsum(mask) - 1, and the
    padded slots are filled with 1, as transformers does
    (``position_ids.masked_fill_(attention_mask == 0, 1)``): [0, 0, 1, 1, 1] -> [1, 1, 0, 1, 2].
    A padded slot is masked out of attention, so its value changes no score.
    """
    mask = np.asarray(attention_mask)
    if mask.ndim not in (1, 2) or not np.isin(mask, (0, 1)).all():
        raise ValueError(
            "attention_mask must be a 1-D or 2-D array of 0s and 1s; got "
            f"{_describe(attention_mask)}"
        )
    positions = np.cumsum(mask, axis=-1, dtype=np.int64) - 1
    positions[mask == 0] = 1
    return positions


class RotaryKVCache:
    """A one-head KV cache that stores keys already rotated at their positions (``08``).

    >>> import numpy as np
    >>> cache = RotaryKVCache(d=2)
    >>> cache.append(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[0.0], [0.0]]))
    >>> np.round(cache.scores(np.array([1.0, 0.0])), 8)   # the query goes to position 2
    array([-0.29426025,  0.38205142])
    """

    def __init__(self, d: int, *, base=None, layout="interleaved", inv_freq=None):
        self.d = check_width(d, "d")
        self.layout = check_layout(layout)
        self.inv_freq = rope_frequencies(self.d, base, inv_freq)  # base 10000 unless given
        self.keys = np.zeros((0, d))
        self.values = np.zeros((0, 0))

    def __len__(self) -> int:
        return self.keys.shape[0]

    def append(self, raw_keys, values) -> None:
        """Rotate ``raw_keys`` [n, d] at the next positions and store them with ``values``."""
        raw_keys = as_float_array(raw_keys, "raw_keys", min_ndim=2)
        values = as_float_array(values, "values", min_ndim=2)
        if raw_keys.ndim != 2 or raw_keys.shape[1] != self.d:
            raise ValueError(
                f"raw_keys must have shape [n, d] with d = {self.d} (the cache's width); "
                f"got {raw_keys.shape}"
            )
        if values.ndim != 2 or (len(self.values) and values.shape[1] != self.values.shape[1]):
            width = self.values.shape[1] if len(self.values) else "dv"
            raise ValueError(
                f"values must have shape [n, {width}] like the values already cached; got {values.shape}"
            )
        if raw_keys.shape[0] != values.shape[0]:
            raise ValueError(
                f"raw_keys and values must have one row per token; got {raw_keys.shape} and {values.shape}"
            )
        positions = continuation_positions(len(self), raw_keys.shape[0])
        rotated = rope_rotate(raw_keys, positions, layout=self.layout, inv_freq=self.inv_freq)
        self.keys = np.concatenate([self.keys, rotated])
        self.values = values if len(self.values) == 0 else np.concatenate([self.values, values])

    def next_position(self) -> int:
        """The position of the next token: the number of tokens cached so far."""
        return len(self)

    def scores(self, raw_query, position=None) -> np.ndarray:
        """Scaled scores of a query against every cached key.

        ``position`` defaults to the correct continuation, :meth:`next_position`; pass 0 to
        see the reset mistake.
        """
        q = as_float_array(raw_query, "raw_query")
        if q.shape != (self.d,):
            raise ValueError(f"raw_query must be one vector of shape ({self.d},); got {q.shape}")
        position = self.next_position() if position is None else position
        q_rot = rope_rotate(q[None, :], [position], layout=self.layout, inv_freq=self.inv_freq)[0]
        return self.keys @ q_rot / np.sqrt(self.d)
