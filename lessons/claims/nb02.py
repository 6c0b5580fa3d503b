"""Claims of notebook 02: radians, position times frequency, relative position.

Distance, here as in the notebook, is the query's position minus the key's: a key two
positions before its query is at distance 2, a key after its query at a negative distance.
"""

import numpy as np

from ..frequencies import pair_frequencies
from ..rotation import radians_to_degrees, rotate_2d
from ._registry import claim

CONTENT = np.array([1.0, 0.0])  # the same content for Q and K


def rotated_dot(q_position, k_position, q=CONTENT, k=CONTENT, frequency=1.0) -> float:
    """Dot product of q and k after turning each by position * frequency."""
    return float(rotate_2d(q, q_position * frequency) @ rotate_2d(k, k_position * frequency))


@claim("02.radian.degrees", "One radian in degrees, about", "57.3")
def radian_degrees():
    return radians_to_degrees(1.0)


@claim("02.quarter_turn.radians", "A quarter turn in radians, pi/2, about", "1.5708")
def quarter_turn_radians():
    return np.pi / 2


@claim("02.position_1", "[1,0] at position 1 (frequency 1) becomes [cos 1, sin 1]", ("0.54030231", "0.84147098"))
def position_1():
    return rotate_2d(CONTENT, 1.0)


@claim("02.dot.positions_0_0", "Same content at positions 0 and 0: dot", "1", tolerance=1e-12)
def dot_positions_0_0():
    return rotated_dot(0, 0)


@claim("02.dot.positions_0_1", "Same content, Q at 0, K at 1, distance -1 (a key after its query): dot cos 1", "0.54030231")
def dot_positions_0_1():
    return rotated_dot(0, 1)


@claim("02.dot.positions_3_4", "Both moved by 3, Q at 3, K at 4, distance -1: dot still", "0.54030231")
def dot_positions_3_4():
    return rotated_dot(3, 4)


@claim("02.identity", "R(m w)q . R(n w)k - q . R((n-m) w)k over 1000 random cases (relative), at most", "0", tolerance=1e-10)
def identity():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 1000, 2))
    m, n = rng.integers(0, 4096, size=(2, 1000))
    w = rng.uniform(1e-4, 1.0, size=1000)
    both = np.sum(rotate_2d(q, m * w) * rotate_2d(k, n * w), axis=-1)
    relative = np.sum(q * rotate_2d(k, (n - m) * w), axis=-1)
    return float(np.max(np.abs(both - relative) / (1 + np.abs(both))))


@claim("02.cos_distance.2", "Rotated [1,0] pairs, Q at 7, K at 5, distance 2: dot cos 2", "-0.41614684")
def cos_distance_2():
    return rotated_dot(7, 5)


@claim("02.cos_distance.7", "Rotated [1,0] pairs, Q at 7, K at 0, distance 7: dot cos 7", "0.75390225")
def cos_distance_7():
    return rotated_dot(7, 0)


@claim("02.cos_distance.sign", "Same content [1, 0]: distance 2 and distance -2 (Q at 5, K at 7) give the same dot: difference", "0", tolerance=1e-12)
def cos_distance_sign():
    return abs(rotated_dot(7, 5) - rotated_dot(5, 7))


@claim("02.cos_distance.sign_other_content", "Different contents (q = [1, 0], k = [0, 1]): the dots at distance 2 and distance -2 add up to", "0", tolerance=1e-12)
def cos_distance_sign_other_content():
    q, k = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    return abs(rotated_dot(7, 5, q, k) + rotated_dot(5, 7, q, k))


@claim("02.moving.both_shift_3", "Q at 1, K at 0, distance 1; both moved by 3 (Q at 4, K at 3, distance 1): dot", "0.54030231")
def moving_both_shift_3():
    return rotated_dot(4, 3)


@claim("02.moving.k_to_2", "Then K moves from 3 to 2 (Q at 4, K at 2, distance 2): the dot crosses below 0", "-0.41614684")
def moving_k_to_2():
    return rotated_dot(4, 2)


# --- The optional box: where the rotation comes from (complex numbers) ---------------------


def as_complex(pairs) -> np.ndarray:
    """Pairs [..., 2] as complex numbers a + ib (the view Meta's LLaMA code takes)."""
    pairs = np.asarray(pairs, dtype=np.float64)
    return pairs[..., 0] + 1j * pairs[..., 1]


def complex_score(q, k, m, n, omega) -> np.ndarray:
    """Re[(q e^{i m omega}) conj(k e^{i n omega})] for pairs q, k [..., 2]."""
    return np.real(as_complex(q) * np.exp(1j * m * omega) * np.conj(as_complex(k) * np.exp(1j * n * omega)))


def meta_complex_rope(x, positions, base=10000.0) -> np.ndarray:
    """RoPE as Meta's LLaMA computes it: view adjacent pairs of x [T, d] as complex
    numbers, multiply pair i at position m by e^{i m omega_i}, view the result as reals."""
    x = np.asarray(x, dtype=np.float64)
    omega = pair_frequencies(x.shape[-1], base)
    turns = np.exp(1j * np.outer(positions, omega))  # torch.polar(ones, positions x omega)
    z = as_complex(x.reshape(*x.shape[:-1], -1, 2)) * turns
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)


@claim(
    "02.complex.score",
    "Re[(q e^{i m omega}) conj(k e^{i n omega})] - R(m omega)q . R(n omega)k over 1000 random cases, at most",
    "0",
    tolerance=1e-12,
)
def complex_score_equals_rotated_dot():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 1000, 2))
    m, n = rng.integers(0, 64, size=(2, 1000))
    omega = rng.uniform(0.01, 1.0, size=1000)
    rotated = np.sum(rotate_2d(q, m * omega) * rotate_2d(k, n * omega), axis=-1)
    return float(np.max(np.abs(complex_score(q, k, m, n, omega) - rotated)))


@claim(
    "02.complex.only_m_minus_n",
    "q conj(k) e^{i(m-n)omega} - (q e^{i m omega}) conj(k e^{i n omega}) over the same cases, at most",
    "0",
    tolerance=1e-12,
)
def complex_product_depends_on_m_minus_n():
    rng = np.random.default_rng(3)
    q, k = as_complex(rng.normal(size=(2, 1000, 2)))
    m, n = rng.integers(0, 64, size=(2, 1000))
    omega = rng.uniform(0.01, 1.0, size=1000)
    both = q * np.exp(1j * m * omega) * np.conj(k * np.exp(1j * n * omega))
    return float(np.max(np.abs(both - q * np.conj(k) * np.exp(1j * (m - n) * omega))))


@claim(
    "02.complex.meta_equals_rotation",
    "Meta's complex form vs each pair turned by rotate_2d, d = 64, positions 0-4095, largest difference",
    "0",
    tolerance=1e-12,
)
def meta_complex_form_equals_rotation():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4096, 64))
    positions = np.arange(4096)
    angles = positions[:, None] * pair_frequencies(64)
    pairs_turned = rotate_2d(x.reshape(4096, 32, 2), angles).reshape(4096, 64)
    return float(np.max(np.abs(meta_complex_rope(x, positions) - pairs_turned)))
