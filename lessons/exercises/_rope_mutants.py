"""The implementations behind 06's "write the tests" exercise: one right, many subtly wrong.

Every function here has the candidate's signature ``rope(q, k, v, q_positions, k_positions)``
(q [..., Tq, d], k and v [..., Tk, d], interleaved pairs, base 10000) and returns
``(q_rotated, k_rotated, v_out)``. Each is SELF-CONTAINED (it imports numpy inside and uses
nothing else of this module), because the grader ships each function's source text into its
sandbox and runs the learner's checker against it there. Do not factor out the shared lines.
"""


def rope_correct(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


# ------------------------------------------------------------------ public (the self-check)
def rope_no_rotation(q, k, v, q_positions, k_positions):
    import numpy as np

    return np.array(q, dtype=np.float64), np.array(k, dtype=np.float64), np.array(v, dtype=np.float64)


def rope_norm_not_kept(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) - x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_query_only(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), np.array(k, dtype=np.float64), np.array(v, dtype=np.float64)


# ------------------------------------------------------------------ hidden (the grade)
def rope_sign_flipped(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = -np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_positions_ignored(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.arange(x.shape[-2], dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q), rotate(k), np.array(v, dtype=np.float64)


def rope_i_not_2i(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(d // 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_split_half(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        half = d // 2
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        first, second = x[..., :half], x[..., half:]
        return np.concatenate(
            [first * np.cos(angle) - second * np.sin(angle), first * np.sin(angle) + second * np.cos(angle)],
            axis=-1,
        )

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_v_rotated(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    v = np.asarray(v, dtype=np.float64)
    v_out = v.copy()
    even = v.shape[-1] - v.shape[-1] % 2  # an odd width: its pairs turn, the last column stays
    v_out[..., :even] = rotate(v[..., :even], k_positions)
    return rotate(q, q_positions), rotate(k, k_positions), v_out


def rope_cache_reset(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    q = np.asarray(q, dtype=np.float64)
    return rotate(q, np.arange(q.shape[-2])), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_float16_angles(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        angle = angle.astype(np.float16).astype(np.float64)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_rotary_width_off(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        r = d - 2  # the last pair is left unrotated
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, r, 2) / d)
        out = x.copy()
        out[..., 0:r:2] = x[..., 0:r:2] * np.cos(angle) - x[..., 1:r:2] * np.sin(angle)
        out[..., 1:r:2] = x[..., 0:r:2] * np.sin(angle) + x[..., 1:r:2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_base_wrong(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 500000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)


def rope_key_rotated_twice(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(rotate(k, k_positions), k_positions), np.array(v, dtype=np.float64)


def rope_positions_off_by_one(q, k, v, q_positions, k_positions):
    import numpy as np

    def rotate(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        angle = (np.asarray(positions, dtype=np.float64)[:, None] + 1) * 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
        out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
        return out

    return rotate(q, q_positions), rotate(k, k_positions), np.array(v, dtype=np.float64)
