"""Turning a 2D arrow: the rotation every later notebook is built from.

Introduced in ``notebooks/01_order_and_the_2d_turn.ipynb``.

Rotating ``[a, b]`` counter-clockwise by ``alpha`` sends the two basis arrows
``[1, 0] -> [cos a, sin a]`` and ``[0, 1] -> [-sin a, cos a]``; by linearity

    a' = a cos(alpha) - b sin(alpha)
    b' = a sin(alpha) + b cos(alpha)

The minus sign is the upward basis arrow leaning left as it turns. The cross terms of
a'^2 + b'^2 cancel, and since cos^2 + sin^2 = 1 what remains is a^2 + b^2: the length is kept.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_number


def rotation_matrix(angle) -> np.ndarray:
    """The 2x2 matrix R(angle) = [[cos, -sin], [sin, cos]] (``01``).

    ``angle`` may be an array; the result then has shape ``angle.shape + (2, 2)``.
    Properties used in ``02``: R(a) R(b) = R(a + b) and R(a)^T = R(-a).
    """
    angle = as_float_array(angle, "angle", min_ndim=0)
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)


def rotate_2d(vector, angle) -> np.ndarray:
    """Rotate 2D vector(s) counter-clockwise by ``angle`` radians (``01``).

    ``vector`` has shape ``(..., 2)``; ``angle`` broadcasts against ``vector[..., 0]``.
    """
    v = as_float_array(vector, "vector")
    if v.shape[-1] != 2:
        raise ValueError(f"vector must have 2 coordinates on its last axis; got shape {v.shape}")
    angle = as_float_array(angle, "angle", min_ndim=0)
    try:
        np.broadcast_shapes(angle.shape, v.shape[:-1])
    except ValueError:
        raise ValueError(f"angle must be one number, or one per vector (shape {v.shape[:-1]}); got shape "
                         f"{angle.shape}") from None
    c, s = np.cos(angle), np.sin(angle)
    a, b = v[..., 0], v[..., 1]
    return np.stack([a * c - b * s, a * s + b * c], axis=-1).astype(v.dtype, copy=False)


def basis_contributions(vector, angle) -> tuple[np.ndarray, np.ndarray]:
    """The two arrows whose head-to-tail sum is the rotated vector (``01``).

    The horizontal part ``a`` turns into ``[a cos, a sin]``; the vertical part ``b`` into
    ``[-b sin, b cos]``.
    """
    v = as_float_array(vector, "vector")
    if v.shape != (2,):
        raise ValueError(f"vector must be a single 2D vector of shape (2,); got shape {v.shape}")
    angle = as_number(angle, "angle")
    a, b = v
    c, s = np.cos(angle), np.sin(angle)
    return np.array([a * c, a * s]), np.array([-b * s, b * c])


def degrees_to_radians(degrees):
    """Degrees to radians: a full turn, 360 degrees, is 2*pi radians (``02``)."""
    degrees = as_float_array(degrees, "degrees", min_ndim=0).astype(np.float64, copy=False)
    return degrees * (np.pi / 180.0)


def radians_to_degrees(radians):
    """Radians to degrees: one radian is 180/pi, about 57.3 degrees (``02``)."""
    radians = as_float_array(radians, "radians", min_ndim=0).astype(np.float64, copy=False)
    return radians * (180.0 / np.pi)
