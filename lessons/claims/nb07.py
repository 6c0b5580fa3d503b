"""Claims of notebook 07: added vs rotated positions."""

import numpy as np

from ..rope import rope_rotate
from ..sinusoidal import fixed_gap_scores, score_terms, sinusoidal_encoding
from ._registry import below, claim

D = 64
SEED = 7
GAP = 2
STARTS = (3, 10, 100, 4000)


def seeded_qk(d=D, seed=SEED) -> tuple[np.ndarray, np.ndarray]:
    """The experiment's query and key contents: two standard-normal vectors of width d."""
    q, k = np.random.default_rng(seed).normal(size=(2, d))
    return q, k


def gap_scores():
    q, k = seeded_qk()
    return fixed_gap_scores(q, k, STARTS, GAP)


@claim("07.experiment.width", "The experiment's head width d", 64)
def experiment_width():
    return seeded_qk()[0].shape[0]


@claim("07.experiment.gap", "The gap between the query and key positions", 2)
def experiment_gap():
    return GAP


@claim("07.experiment.starts", "The four starts of the query", ("3", "10", "100", "4000"))
def experiment_starts():
    return STARTS


@claim("07.rotary.value", "The rotary score at gap 2 (the same at every start)", "2.9014")
def rotary_value():
    return gap_scores()[0][0]


@claim("07.rotary.spread", "Rotary scores at starts 3, 10, 100, 4000: largest minus smallest: below 1e-11", True)
@below(1e-11)
def rotary_spread():
    rotary = gap_scores()[0]
    return float(rotary.max() - rotary.min())


@claim("07.additive.scores", "Additive (sinusoidal) scores at starts 3, 10, 100, 4000", ("21.6566", "21.7020", "16.5754", "34.0631"))
def additive_scores():
    return gap_scores()[1]


@claim("07.additive.spread", "Additive scores: largest minus smallest", "17.4877")
def additive_spread():
    additive = gap_scores()[1]
    return float(additive.max() - additive.min())


@claim("07.terms.sum", "The four terms add up to the additive score: largest difference: below 1e-10", True)
@below(1e-10)
def terms_sum():
    q, k = seeded_qk()
    rotary, additive = gap_scores()
    sums = [score_terms(q, k, m, m + GAP).sum() for m in STARTS]
    return float(np.max(np.abs(np.array(sums) - additive)))


@claim("07.terms.content_constant", "q.k: the same at every start", "0.7795")
def terms_content_constant():
    q, k = seeded_qk()
    terms = np.array([score_terms(q, k, m, m + GAP)[0] for m in STARTS])
    assert np.ptp(terms) == 0
    return terms[0]


@claim("07.terms.position_only", "P[m].P[m+2]: the same at every start (it depends on the distance m - n only)", "28.3039")
def terms_position_only():
    q, k = seeded_qk()
    terms = np.array([score_terms(q, k, m, m + GAP)[3] for m in STARTS])
    assert np.ptp(terms) < 1e-10
    return terms[0]


@claim("07.terms.cross_moves", "The two cross terms move with the start: spread of their sum", "17.4877")
def terms_cross_moves():
    q, k = seeded_qk()
    cross = np.array([score_terms(q, k, m, m + GAP)[1:3].sum() for m in STARTS])
    return float(np.ptp(cross))


@claim("07.norm.position_vector", "Every sinusoidal position vector has length sqrt(d/2) = sqrt(32)", "5.65685425")
def norm_position_vector():
    norms = np.linalg.norm(sinusoidal_encoding(np.arange(5000), D), axis=1)
    assert np.ptp(norms) < 1e-10
    return norms[0]


@claim("07.norm.q", "The length of q", "7.1389")
def norm_q():
    return float(np.linalg.norm(seeded_qk()[0]))


@claim("07.norm.rotated", "Rotating q at starts 3, 10, 100, 4000 changes its length by: below 1e-12", True)
@below(1e-12)
def norm_rotated():
    q = seeded_qk()[0]
    rotated = rope_rotate(np.tile(q, (len(STARTS), 1)), list(STARTS))
    return float(np.max(np.abs(np.linalg.norm(rotated, axis=1) - np.linalg.norm(q))))


@claim("07.norm.added", "The length of q + P[m] at starts 3, 10, 100, 4000", ("8.4101", "7.9963", "8.3812", "9.1823"))
def norm_added():
    q = seeded_qk()[0]
    return np.linalg.norm(q + sinusoidal_encoding(list(STARTS), D), axis=1)


# ---- with projections (the original Transformer adds P before W_Q and W_K) -----------------

def random_projections(d=D, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Random W_Q, W_K [d, d] with standard-normal entries scaled by 1/sqrt(d), seeded."""
    w_q, w_k = np.random.default_rng(seed).normal(size=(2, d, d)) / np.sqrt(d)
    return w_q, w_k


@claim("07.projected.position_only", "Random 64x64 W_Q, W_K (seed 0): (P[m] W_Q).(P[m+2] W_K) at starts 3, 10, 100, 4000", ("-0.974", "-1.862", "3.115", "0.287"))
def projected_position_only():
    w_q, w_k = random_projections()
    table = sinusoidal_encoding([p for m in STARTS for p in (m, m + GAP)], D).reshape(len(STARTS), 2, D)
    return [(pm @ w_q) @ (pn @ w_k) for pm, pn in table]


@claim("07.float64.spacing", "The gap between neighbouring float64 numbers near 4000, in units of 1e-13", "4.5")
def float64_spacing():
    return float(np.spacing(4000.0)) * 1e13


@claim("07.rotary.deviation_4000", "Rotary score at start 4000 minus at start 3: below the float64 spacing near 4000 (4.5e-13)", True)
@below(float(np.spacing(4000.0)))  # the spacing itself, 4.547e-13 (claim 07.float64.spacing)
def rotary_deviation_4000():
    rotary = gap_scores()[0]
    return abs(float(rotary[-1] - rotary[0]))


@claim("07.additive.spread_over_rotary", "The added scores' spread divided by the rotary score", "6.03")
def additive_spread_over_rotary():
    rotary, additive = gap_scores()
    return float(np.ptp(additive) / rotary[0])


@claim("07.norm.qk", "|q| |k|: the largest a dot product of the rotated contents could be", "51.4")
def norm_qk():
    q, k = seeded_qk()
    return float(np.linalg.norm(q) * np.linalg.norm(k))


@claim("07.additive.spread_over_qk", "The added scores' spread divided by |q| |k|", "0.34")
def additive_spread_over_qk():
    q, k = seeded_qk()
    _, additive = gap_scores()
    return float(np.ptp(additive) / (np.linalg.norm(q) * np.linalg.norm(k)))


@claim("07.norm.q_over_p", "The toy's |q| / |P[m]|", "1.26")
def norm_q_over_p():
    return float(np.linalg.norm(seeded_qk()[0]) / np.sqrt(D / 2))
