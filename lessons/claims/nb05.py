"""Claims of notebook 05: the token swap, again."""

import numpy as np

from ..attention import attention
from ..head import look_back_query, same_content_keys
from ..rope import rope_rotate
from ._registry import below, claim
from .nb01 import KEYS, QUERY, SWAP, VALUES

QUERY_POSITION = [2]
KEY_POSITIONS = [0, 1, 2]


def rope_read(keys=KEYS, values=VALUES) -> np.ndarray:
    """The query at position 2 reading keys at 0, 1, 2 with RoPE: the output vector."""
    return attention(QUERY, keys, values, q_positions=QUERY_POSITION, k_positions=KEY_POSITIONS)[1][0]


@claim("05.rope.original", "With RoPE, the original order reads", ("0.6047", "1.6751"))
def rope_original():
    return rope_read()


@claim("05.rope.swapped", "With RoPE, the first two (K, V) rows swapped read", ("0.6475", "1.4569"))
def rope_swapped():
    return rope_read(KEYS[SWAP], VALUES[SWAP])


@claim("05.no_rope.original", "Without RoPE, the original order reads", ("0.8022", "1.1978"))
def no_rope_original():
    return attention(QUERY, KEYS, VALUES)[1][0]


@claim("05.no_rope.swapped", "Without RoPE, the swapped order reads the same", ("0.8022", "1.1978"))
def no_rope_swapped():
    return attention(QUERY, KEYS[SWAP], VALUES[SWAP])[1][0]


@claim("05.rope.swap_changes_output", "With RoPE the swap changes the output", True)
def rope_swap_changes_output():
    return not np.allclose(rope_read(), rope_read(KEYS[SWAP], VALUES[SWAP]))


@claim("05.identical_content", "Swapping two identical (K, V) rows changes nothing, even with RoPE", "0", tolerance=1e-12)
def identical_content():
    keys = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    values = np.array([[0.0, 2.0], [0.0, 2.0], [1.0, 2.0]])
    return float(np.max(np.abs(rope_read(keys, values) - rope_read(keys[SWAP], values[SWAP]))))


def rope_weights(keys=KEYS, values=VALUES) -> np.ndarray:
    """The query at position 2 reading keys at 0, 1, 2 with RoPE: the weights, by slot."""
    return attention(QUERY, keys, values, q_positions=QUERY_POSITION, k_positions=KEY_POSITIONS)[0][0]


@claim("05.rope.weights.original", "With RoPE, the weights of slots 0, 1, 2 in the original order", ("0.1625", "0.3953", "0.4422"))
def rope_weights_original():
    return rope_weights()


@claim("05.rope.weights.swapped", "With RoPE, the weights of slots 0, 1, 2 after the swap", ("0.3525", "0.2716", "0.3759"))
def rope_weights_swapped():
    return rope_weights(KEYS[SWAP], VALUES[SWAP])


def mirror_keys() -> np.ndarray:
    """Keys u and -u at angle 1.5 rad: halfway between the turns of slots 0 and 1 seen from slot 2."""
    u = np.array([np.cos(1.5), np.sin(1.5)])
    return np.array([u, -u, [1.0, 1.0]])


@claim("05.mirror_keys", "Keys at angle 1.5 rad score the same in slots 0 and 1: the swap changes the output by less than 1e-12", True)
@below(1e-12)
def mirror_keys_swap_changes_nothing():
    keys = mirror_keys()
    # Each key keeps its weight (so its score) when it moves to the other slot, and the output stays.
    same_weight = rope_weights(keys[SWAP], VALUES[SWAP])[SWAP] - rope_weights(keys)
    same_output = rope_read(keys) - rope_read(keys[SWAP], VALUES[SWAP])
    return float(max(np.max(np.abs(same_weight)), np.max(np.abs(same_output))))


def balanced_values() -> np.ndarray:
    """The puzzle's first two values and a third one chosen so the swap's weight changes cancel."""
    change = rope_weights(KEYS[SWAP], VALUES[SWAP])[SWAP] - rope_weights()  # by content
    third = -(change[0] * VALUES[0] + change[1] * VALUES[1]) / change[2]
    return np.array([VALUES[0], VALUES[1], third])


@claim("05.cancelling_values", "Values that balance the weight changes: the swap moves the weights but changes the output by less than 1e-12", True)
@below(1e-12)
def cancelling_values():
    values = balanced_values()
    return float(np.max(np.abs(rope_read(KEYS, values) - rope_read(KEYS[SWAP], values[SWAP]))))


@claim("05.cancelling_values.weights_move", "With those values the swap still moves the weights", True)
def cancelling_values_weights_move():
    return not np.allclose(rope_weights(KEYS[SWAP], VALUES[SWAP])[SWAP], rope_weights(), rtol=0, atol=1e-3)


# --------------------------------------------------------------------------- a head that looks back D tokens

LOOK_BACK_D, LOOK_BACK = 64, 3
LOOK_QUERY_POSITION = 15
LOOK_KEY_POSITIONS = np.arange(16)
LOOK_SCALES = (1, 4, 16, 64)


def look_back_scores(query_position=LOOK_QUERY_POSITION, n_keys=16) -> np.ndarray:
    """The hand-built query at ``query_position`` against (1, 0)-in-every-pair keys at 0 .. n_keys-1."""
    q = rope_rotate(look_back_query(LOOK_BACK_D, LOOK_BACK)[None, :], [query_position])
    k = rope_rotate(same_content_keys(n_keys, LOOK_BACK_D), np.arange(n_keys))
    return (q @ k.T)[0]


def look_back_weights(scale) -> np.ndarray:
    """Causal attention weights of the scaled query at 15 over the keys at 0 .. 15."""
    q = scale * look_back_query(LOOK_BACK_D, LOOK_BACK)[None, :]
    keys = same_content_keys(len(LOOK_KEY_POSITIONS), LOOK_BACK_D)
    weights, _ = attention(q, keys, keys, causal=True, q_positions=[LOOK_QUERY_POSITION], k_positions=LOOK_KEY_POSITIONS)
    return weights[0]


@claim("05.look_back.score_at_12", "d = 64, query at 15 built to look 3 back: the score of the key at 12", "32.0")
def look_back_score_at_12():
    return look_back_scores()[12]


@claim("05.look_back.score_at_11_and_13", "The scores of the keys at 11 and 13", ("30.917", "30.917"))
def look_back_score_at_11_and_13():
    return look_back_scores()[[11, 13]]


@claim("05.look_back.best_key", "The key with the highest score", 12)
def look_back_best_key():
    return int(np.argmax(look_back_scores()))


@claim("05.look_back.same_query_everywhere", "The same query at any position from 3 to 200 scores highest on the key exactly 3 before it", True)
def look_back_same_query_everywhere():
    return all(int(np.argmax(look_back_scores(m, m + 1))) == m - LOOK_BACK for m in range(LOOK_BACK, 201))


@claim("05.look_back.weight_on_12", "Query scaled by 1, 4, 16, 64: the attention weight on the key at 12 (scores / sqrt(64), causal softmax over keys 0 .. 15)", ("0.1308", "0.3779", "0.8127", "0.9997"))
def look_back_weight_on_12():
    return [look_back_weights(s)[12] for s in LOOK_SCALES]
