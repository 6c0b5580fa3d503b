"""Claims of notebook 09: longer contexts — interpolation, NTK-aware, YaRN, Llama 3."""

import numpy as np

from ..frequencies import pair_frequencies
from ..kv_cache import RotaryKVCache
from ..rope import rope_rotate
from ..scaling import (
    dynamic_ntk_base,
    dynamic_ntk_frequencies,
    linear_frequencies,
    llama3_frequencies,
    ntk_aware_base,
    ntk_aware_frequencies,
    unseen_angle_pairs,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_frequencies,
)
from ..sinusoidal import rotary_score
from ._registry import below, claim
from .nb07 import seeded_qk

# The running example: a 64-wide head trained on 2048 positions, stretched 4 times.
D, BASE, TRAINED, FACTOR = 64, 10000.0, 2048, 4
EXTENDED = TRAINED * FACTOR
ONES = np.array([[1.0, 0.0], [1.0, 0.0]])


def scaled_frequencies() -> dict:
    """Each method's frequencies for the running example (d 64, theta 1e4, L 2048, s 4)."""
    return {
        "none": pair_frequencies(D, BASE),
        "linear": linear_frequencies(D, FACTOR, BASE),
        "NTK-aware": ntk_aware_frequencies(D, FACTOR, BASE),
        "dynamic NTK": dynamic_ntk_frequencies(D, FACTOR, EXTENDED, TRAINED, BASE),
        "YaRN": yarn_frequencies(D, FACTOR, TRAINED, BASE)[0],
        "Llama 3": llama3_frequencies(D, FACTOR, BASE, original_max_position_embeddings=TRAINED),
    }


def unseen_count(method: str) -> int:
    inv = scaled_frequencies()[method]
    return int(unseen_angle_pairs(pair_frequencies(D, BASE), TRAINED, inv, EXTENDED).sum())


def cache_scores(q_factor, k_factor):
    """Keys [1,0] cached at 0 and 1 with frequency 1/k_factor, query [1,0] at 2 with 1/q_factor."""
    cache = RotaryKVCache(d=2, inv_freq=[1.0 / k_factor])
    cache.append(ONES, np.zeros((2, 1)))
    query = rope_rotate(np.array([[1.0, 0.0]]), [2], inv_freq=[1.0 / q_factor])[0]
    return cache.keys @ query / np.sqrt(2)


def counts_by_ratio(ratio, s):
    """(unchanged, blended, divided by s) pair counts from scaled / default frequency ratios."""
    unchanged = int(np.isclose(ratio, 1.0, rtol=1e-12, atol=0).sum())
    divided = int(np.isclose(ratio, 1.0 / s, rtol=1e-12, atol=0).sum())
    return unchanged, len(ratio) - unchanged - divided, divided


# ---- linear interpolation ------------------------------------------------------------------

@claim("09.linear.cache_s2", "Linear interpolation s = 2, the cache example: [cos1, cos0.5]/sqrt2", ("0.38205142", "0.62054458"))
def linear_cache_s2():
    return cache_scores(2, 2)


@claim("09.linear.positions_equal_frequencies", "Positions m/s and frequencies omega/s give the same rotation (d = 64, s = 4): difference: below 1e-12", True)
@below(1e-12)
def linear_positions_equal_frequencies():
    x = np.random.default_rng(9).normal(size=(3, 40, D))
    positions = np.arange(40) * 97.0
    by_position = rope_rotate(x, positions / FACTOR)
    by_frequency = rope_rotate(x, positions, inv_freq=linear_frequencies(D, FACTOR))
    return float(np.max(np.abs(by_position - by_frequency)))


@claim("09.linear.mixed_s", "Keys cached with s = 1, query with s = 2: the scores become", ("0.38205142", "0.70710678"))
def linear_mixed_s():
    return cache_scores(2, 1)


@claim("09.linear.pair0_step", "Linear s = 4: pair 0 turns this much between neighbours (rad), was 1", "0.25", tolerance=1e-12)
def linear_pair0_step():
    return linear_frequencies(D, FACTOR)[0]


@claim("09.unseen.none", "d 64 trained on 2048, run on 8192, no scaling: pairs meeting unseen angles", 11)
def unseen_none():
    return unseen_count("none")


@claim("09.unseen.linear", "... with linear s = 4", 0)
def unseen_linear():
    return unseen_count("linear")


# ---- NTK-aware and dynamic NTK -------------------------------------------------------------

@claim("09.ntk.base", "NTK-aware base for d = 64, s = 4: theta * s^(d/(d-2))", "41829.4")
def ntk_base():
    return ntk_aware_base(D, FACTOR, BASE)


@claim("09.ntk.ends", "NTK-aware: pair 0 keeps its frequency, the last pair is divided by s: ratios", ("1", "0.25"), tolerance=1e-12)
def ntk_ends():
    ratio = ntk_aware_frequencies(D, FACTOR) / pair_frequencies(D)
    return ratio[0], ratio[-1]


@claim("09.ntk.pair1", "NTK-aware: pair 1 keeps this fraction of its frequency", "0.9563")
def ntk_pair1():
    return (ntk_aware_frequencies(D, FACTOR) / pair_frequencies(D))[1]


@claim("09.unseen.ntk", "... with NTK-aware s = 4: pairs still meeting unseen angles", 10)
def unseen_ntk():
    return unseen_count("NTK-aware")


@claim("09.dynamic.bases", "Dynamic NTK (s = 4, M = 2048): the base at 2048, 4096 and 8192 tokens", ("10000", "52664.43", "141213.76"))
def dynamic_bases():
    return [dynamic_ntk_base(D, FACTOR, n, TRAINED) for n in (2048, 4096, 8192)]


@claim("09.dynamic.slowest", "Dynamic NTK at 8192 tokens: the slowest pair's frequency is divided by s T / M - (s - 1)", "13", tolerance=1e-9)
def dynamic_slowest():
    return pair_frequencies(D, BASE)[-1] / scaled_frequencies()["dynamic NTK"][-1]


@claim("09.unseen.dynamic", "... with dynamic NTK at 8192 tokens", 0)
def unseen_dynamic():
    return unseen_count("dynamic NTK")


@claim("09.base_change.scores", "NTK-aware base: largest change of the seeded d = 64 score, query at 0 and key at 0-16 (distances 0 to -16)", "2.9945")
def base_change_scores():
    q, k = seeded_qk()
    new_base = ntk_aware_base(D, FACTOR)
    return max(abs(rotary_score(q, k, 0, n, new_base) - rotary_score(q, k, 0, n)) for n in range(17))


# ---- YaRN ----------------------------------------------------------------------------------

@claim("09.yarn.range", "YaRN, d = 64, theta = 1e4, L = 2048: low and high", ("8", "21"), tolerance=0)
def yarn_range():
    return yarn_correction_range(64, 10000.0, 2048)


@claim("09.yarn.counts", "YaRN s = 4: pairs unchanged, blended, divided by s", ("9", "12", "11"), tolerance=0)
def yarn_counts():
    inv, _ = yarn_frequencies(D, FACTOR, TRAINED)
    return counts_by_ratio(inv / pair_frequencies(D), FACTOR)


@claim("09.yarn.attention_factor", "YaRN s = 4: attention factor 0.1 ln(s) + 1", "1.13862944")
def yarn_attention_factor_s4():
    return yarn_attention_factor(FACTOR)


@claim("09.yarn.logit_scale", "... cos and sin both scaled, so logits scale by its square", "1.29647699")
def yarn_logit_scale():
    return yarn_attention_factor(FACTOR) ** 2


@claim("09.unseen.yarn", "... with YaRN s = 4: pairs meeting unseen angles", 0)
def unseen_yarn():
    return unseen_count("YaRN")


# ---- Llama 3 -------------------------------------------------------------------------------

@claim("09.llama3.counts", "Llama 3, d = 128, theta = 5e5, s = 8, L = 8192: pairs unchanged, blended, divided by 8", ("29", "6", "29"), tolerance=0)
def llama3_counts():
    ratio = llama3_frequencies(128, 8, 500000.0) / pair_frequencies(128, 500000.0)
    return counts_by_ratio(ratio, 8)


@claim("09.llama3.example_counts", "Llama 3's rule on the running example (d 64, L 2048, s 4): unchanged, blended, divided", ("16", "5", "11"), tolerance=0)
def llama3_example_counts():
    return counts_by_ratio(scaled_frequencies()["Llama 3"] / pair_frequencies(D), FACTOR)


@claim("09.unseen.llama3", "... with Llama 3's rule: pairs meeting unseen angles", 0)
def unseen_llama3():
    return unseen_count("Llama 3")


# ---- what it does not prove ----------------------------------------------------------------

@claim("09.computable.far", "The seeded 07 rotary score at gap 2 is still computed at start 1,000,000", "2.9014")
def computable_far():
    q, k = seeded_qk()
    return rotary_score(q, k, 1_000_000, 1_000_002)


# ---- which scalings change short distances -------------------------------------------------

def short_distance_change(inv_freq, factor=1.0, distances=range(17), contents=None) -> float:
    """Largest change of the seeded 07 score (q at 0, k at position n) against the default frequencies.

    ``contents=(k, q)`` swaps the roles: the moving vector is then the query, so the key sits
    before it (dot products are symmetric, so only which one turns matters).
    """
    q, k = seeded_qk() if contents is None else contents
    distances = np.asarray(list(distances), dtype=np.float64)
    keys = np.tile(k, (len(distances), 1))

    def scores(inv, f):   # q at position 0 is not turned
        return f * f * (rope_rotate(keys, distances, inv_freq=inv) @ q)

    return float(np.max(np.abs(scores(inv_freq, factor) - scores(pair_frequencies(D, BASE), 1.0))))


@claim("09.short.changes", "d 64, s 4, query at 0 and key at 0-16 (distances 0 to -16): largest score change for linear, NTK-aware, YaRN frequencies, YaRN with its factor, Llama 3", ("11.4", "2.99", "0.39", "2.40", "0.27"))
def short_changes():
    f = scaled_frequencies()
    inv, factor = yarn_frequencies(D, FACTOR, TRAINED)
    return [
        short_distance_change(f["linear"]),
        short_distance_change(f["NTK-aware"]),
        short_distance_change(inv),
        short_distance_change(inv, factor),
        short_distance_change(f["Llama 3"]),
    ]


@claim("09.short.dynamic", "Dynamic NTK: the same change with the sequence at 2048 tokens, then at 8192", ("0", "5.92"), tolerance=0.005)
def short_dynamic():
    return [
        short_distance_change(dynamic_ntk_frequencies(D, FACTOR, TRAINED, TRAINED)),
        short_distance_change(scaled_frequencies()["dynamic NTK"]),
    ]


@claim("09.ntk.unseen_pairs", "NTK-aware s = 4: the pairs still past their trained range, first and last", ("21", "30"), tolerance=0)
def ntk_unseen_pairs():
    f = scaled_frequencies()
    mask = unseen_angle_pairs(f["none"], TRAINED, f["NTK-aware"], EXTENDED)
    pairs = np.flatnonzero(mask)
    assert np.array_equal(pairs, np.arange(pairs[0], pairs[-1] + 1))
    return pairs[0], pairs[-1]


@claim("09.yarn.corr", "YaRN, d 64, L 2048: corr(32) and corr(1), before floor and ceil", ("8.06", "20.11"))
def yarn_corr():
    from ..scaling import yarn_correction_dim

    return yarn_correction_dim(32, D, BASE, TRAINED), yarn_correction_dim(1, D, BASE, TRAINED)


# ---- LongRoPE ------------------------------------------------------------------------------

@claim("09.longrope.attention_factor", "LongRoPE, s = 4, L = 2048: attention factor sqrt(1 + ln s / ln L)", "1.0871")
def longrope_attention_factor():
    from ..scaling import longrope_frequencies

    ones = np.ones(D // 2)
    return longrope_frequencies(D, ones, ones, EXTENDED, TRAINED, factor=FACTOR)[1]


@claim("09.longrope.special_cases", "LongRoPE with every factor s, or with NTK-aware's per-pair factors, gives linear and NTK-aware: difference: below 1e-12", True)
@below(1e-12)
def longrope_special_cases():
    from ..scaling import longrope_frequencies

    f = scaled_frequencies()
    ones = np.ones(D // 2)
    as_linear, _ = longrope_frequencies(D, ones, np.full(D // 2, float(FACTOR)), EXTENDED, TRAINED, factor=FACTOR)
    as_ntk, _ = longrope_frequencies(D, ones, f["none"] / f["NTK-aware"], EXTENDED, TRAINED, factor=FACTOR)
    return max(np.max(np.abs(as_linear - f["linear"])), np.max(np.abs(as_ntk - f["NTK-aware"])))


@claim("09.longrope.short_prompt", "LongRoPE at 2048 tokens or fewer uses its short factors (all 1 here): change from the default: below 1e-12", True)
@below(1e-12)
def longrope_short_prompt():
    from ..scaling import longrope_frequencies

    f = scaled_frequencies()
    ones = np.ones(D // 2)
    short, _ = longrope_frequencies(D, ones, f["none"] / f["NTK-aware"], TRAINED, TRAINED, factor=FACTOR)
    return float(np.max(np.abs(short - f["none"])))


@claim("09.short.changes_keys_before", "... the same with the key at 0 and the query at 0-16 (keys before the query, distances 0 to 16): linear, NTK-aware, YaRN frequencies, YaRN with its factor, Llama 3", ("6.80", "3.87", "0.40", "1.57", "0.27"))
def short_changes_keys_before():
    f = scaled_frequencies()
    inv, factor = yarn_frequencies(D, FACTOR, TRAINED)
    q, k = seeded_qk()
    return [
        short_distance_change(f["linear"], contents=(k, q)),
        short_distance_change(f["NTK-aware"], contents=(k, q)),
        short_distance_change(inv, contents=(k, q)),
        short_distance_change(inv, factor, contents=(k, q)),
        short_distance_change(f["Llama 3"], contents=(k, q)),
    ]
