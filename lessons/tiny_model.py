"""A tiny attention head trained by hand, with and without positions (``10``).

The task: a sequence of random tokens; at every position ``t >= D`` predict the token
``D`` places back (``D = 1``: the previous token). Attention alone cannot do it: the read of
a query is a weighted sum over its keys, and without positions the weights depend only on
the contents, so swapping two earlier tokens (with their keys and values) leaves the read
unchanged (the swap puzzle of ``01``). Only at the first positions, where the causal mask
leaves few keys, can a head guess well.

The model, one head, numpy only::

    X  = one_hot(tokens)                   [B, T, V]  fixed embeddings (width V)
    H  = X + P[t]                          (added positions: sinusoidal or a learned table)
    Q  = H W_q,   K = H W_k                [B, T, d]  learned
    Q, K rotated by R(t)                   (RoPE)
    S  = Q K^T / sqrt(d), causal mask      [B, T, T]
    A  = softmax(S)
    O  = A X                               the values are the fixed token embeddings
    Z  = O W_o + b_o                       [B, T, V]  a linear read-out
    loss = cross-entropy of Z at t >= D against tokens[t - D]

:func:`loss_and_grads` writes the backward pass out by hand. RoPE is linear: R(t) is an
orthogonal matrix, so its backward multiplies by R(t)^T = R(-t), the rotation by the negative
angles. :func:`gradient_check` compares every parameter's gradient with central finite
differences. :func:`train` runs Adam, seeded; :func:`accuracy` measures on fresh sequences
of any length. The four position methods are :data:`METHODS`.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from . import results_cache
from ._checks import as_float_array, as_number
from .attention import softmax
from .frequencies import DEFAULT_BASE, angle_table, pair_frequencies
from .head import look_back_query
from .sinusoidal import sinusoidal_encoding

METHODS = ("none", "sinusoidal", "learned", "rope")
METHOD_NAMES = {
    "none": "no positions",
    "sinusoidal": "added sinusoidal",
    "learned": "learned table",
    "rope": "RoPE",
}


@dataclass(frozen=True)
class Config:
    """One training run.

    method        one of :data:`METHODS`.
    vocab         V, the number of token values; the embeddings are one-hot, width V.
    width         d, the width of the head (queries and keys); even.
    distance      D, how far back the target token is.
    train_length  the sequence length of training (and the rows of a learned table).
    lengths       training lengths drawn at random per step instead of ``train_length``
                  (a remedy); ``None`` trains at ``train_length`` only.
    steps, batch, lr, seed: the budget of Adam and its seed.
    base          RoPE's and the sinusoidal table's base.
    """

    method: str = "rope"
    vocab: int = 16
    width: int = 16
    distance: int = 1
    train_length: int = 16
    lengths: tuple[int, ...] | None = None
    steps: int = 200
    batch: int = 32
    lr: float = 0.05
    seed: int = 0
    base: float = DEFAULT_BASE

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        for name in ("vocab", "width", "distance", "train_length", "steps", "batch"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if self.width % 2:
            raise ValueError(f"width must be even (RoPE turns pairs of coordinates); got {self.width}")
        if self.distance >= self.train_length:
            raise ValueError(
                f"distance must be smaller than train_length ({self.train_length}); got {self.distance}"
            )
        if self.lengths is not None:
            if isinstance(self.lengths, (list, np.ndarray)):  # a list typed in a Try it: kept as a tuple
                object.__setattr__(self, "lengths", tuple(int(n) for n in self.lengths))
            if not isinstance(self.lengths, tuple) or not self.lengths or any(
                    int(n) <= self.distance for n in self.lengths):
                raise ValueError(
                    f"lengths must be a non-empty tuple of lengths above distance {self.distance}; "
                    f"got {self.lengths!r}"
                )
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a whole number, 0 or more; got {self.seed!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive; got {self.lr!r}")

    @property
    def table_rows(self) -> int:
        """Rows of the learned position table: the longest length seen in training."""
        return max(self.lengths) if self.lengths is not None else self.train_length


def init_params(config: Config) -> dict[str, np.ndarray]:
    """Initial parameters, seeded by ``config.seed``: small random W_q, W_k, W_o (and the
    learned table ``P``, one row per trained position), zero b_o.
    """
    _check_config(config)
    rng = np.random.default_rng([config.seed, 1])
    V, d = config.vocab, config.width
    params = {
        "W_q": rng.normal(scale=1 / np.sqrt(V), size=(V, d)),
        "W_k": rng.normal(scale=1 / np.sqrt(V), size=(V, d)),
        "W_o": rng.normal(scale=1 / np.sqrt(V), size=(V, V)),
        "b_o": np.zeros(V),
    }
    if config.method == "learned":
        params["P"] = rng.normal(scale=1 / np.sqrt(V), size=(config.table_rows, V))
    return params


def random_tokens(rng: np.random.Generator, batch: int, length: int, vocab: int) -> np.ndarray:
    """A [batch, length] array of tokens drawn uniformly from 0 .. vocab - 1."""
    return rng.integers(0, vocab, size=(batch, length))


@functools.cache
def _constant(kind: str, *args) -> np.ndarray:
    """Tables that depend only on sizes, computed once per process (read-only): the one-hot
    embeddings, the causal mask (0 where a query may see the key, -inf where it may not),
    the sinusoidal table and RoPE's angles. Training asks for
    them every step; building them anew was a large part of a step's time on these tiny arrays.
    """
    if kind == "one_hot":
        (vocab,) = args
        table = np.eye(vocab)
    elif kind == "mask":
        (length,) = args
        table = np.where(np.tri(length, dtype=bool), 0.0, -np.inf)  # added to the scores
    elif kind == "sinusoidal":
        length, vocab, base = args
        table = sinusoidal_encoding(np.arange(length), vocab, base)
    elif kind == "angles":
        length, width, base = args
        table = angle_table(np.arange(length), pair_frequencies(width, base))
    else:
        raise ValueError(f"kind must be one_hot, mask, sinusoidal or angles; got {kind!r}")
    table.setflags(write=False)
    return table


def position_vectors(params: dict, config: Config, length: int) -> np.ndarray | None:
    """The [length, V] vectors added to the embeddings, or None (no positions, RoPE).

    A learned table has rows only up to its trained length; later positions get a zero
    vector (no row, no position).
    """
    if config.method == "sinusoidal":
        return _constant("sinusoidal", length, config.vocab, config.base)
    if config.method == "learned":
        table = params["P"]
        out = np.zeros((length, config.vocab))
        rows = min(length, table.shape[0])
        out[:rows] = table[:rows]
        return out
    return None


def rope_angles(config: Config, length: int) -> np.ndarray:
    """RoPE's [length, d/2] angle table t * omega_i (computed once per length)."""
    _check_config(config)
    return _constant("angles", length, config.width, config.base)


def rotate(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """RoPE on x [..., T, d] (interleaved pairs) by ``angles`` [T, d/2], in one complex product.

    The same rotation as :func:`lessons.rope.rope_rotate` (a test checks it), without its
    input checks: the training loop calls it four times a step.
    """
    z = np.ascontiguousarray(x, dtype=np.float64).view(np.complex128) * np.exp(1j * angles)
    return z.view(np.float64)


def unrotate(grad: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """The backward of RoPE: rotate the gradient by the negative angles, R(t)^T = R(-t)."""
    return rotate(grad, -angles)


def _check_tokens(tokens, config: Config) -> np.ndarray:
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(
            f"tokens must be a [batch, length] array of integers; got {tokens.dtype}, shape {tokens.shape}"
        )
    if tokens.shape[1] <= config.distance:
        raise ValueError(
            f"tokens must be longer than the distance {config.distance}; got length {tokens.shape[1]}"
        )
    if tokens.min() < 0 or tokens.max() >= config.vocab:
        raise ValueError(f"tokens must lie in 0 .. {config.vocab - 1}; got {tokens.min()} .. {tokens.max()}")
    return tokens


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b (b may be a stack matching a's), computed a block of rows of a at a time.

    numpy hands each product to OpenBLAS, which splits a product of more than about 2^18
    multiply-adds across threads; on 2 busy cores that made the long test sequences 10 to 50
    times slower (measured). Blocks of at most 2^17 multiply-adds run on one thread. The
    sums are the same.
    """
    rows = max(1, 2**17 // (a.shape[-1] * b.shape[-1]))
    if a.shape[-2] <= rows:
        return a @ b
    return np.concatenate([a[..., i : i + rows, :] @ b for i in range(0, a.shape[-2], rows)], axis=-2)


def _project(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [B, T, n] times w [n, m], as one 2-D product."""
    return _matmul(x.reshape(-1, x.shape[-1]), w).reshape(*x.shape[:-1], w.shape[1])


def _outer_sum(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """sum over b, t of x[b, t]^T g[b, t]: the gradient of a weight used as x @ W."""
    return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The batched product a[i] @ b[i] (see :func:`_matmul`)."""
    return _matmul(a, b)


@dataclass
class Forward:
    """Everything the forward pass computed (the backward pass reads it)."""

    X: np.ndarray
    H: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    Qr: np.ndarray
    Kr: np.ndarray
    A: np.ndarray
    O: np.ndarray  # noqa: E741 (the attention output, as in the formulas)
    Z: np.ndarray
    probs: np.ndarray
    loss: float
    angles: np.ndarray | None = field(default=None, repr=False)


def forward(params: dict, tokens, config: Config) -> Forward:
    """The forward pass on ``tokens`` [B, T]: loss and every intermediate."""
    tokens = _check_tokens(tokens, config)
    B, T = tokens.shape
    V, d, D = config.vocab, config.width, config.distance
    X = _constant("one_hot", V)[tokens]
    P = position_vectors(params, config, T)
    H = X if P is None else X + P
    Q = _project(H, params["W_q"])
    K = _project(H, params["W_k"])
    angles = None
    if config.method == "rope":
        angles = rope_angles(config, T)
        Qr, Kr = rotate(Q, angles), rotate(K, angles)
    else:
        Qr, Kr = Q, K
    S = _bmm(Qr, np.swapaxes(Kr, 1, 2)) / np.sqrt(d)
    S = S + _constant("mask", T)  # the causal mask: -inf above the diagonal
    A = softmax(S)
    O = _bmm(A, X)  # noqa: E741
    Z = _project(O, params["W_o"]) + params["b_o"]
    probs = softmax(Z)
    targets = tokens[:, : T - D]
    picked = np.take_along_axis(probs[:, D:], targets[..., None], axis=-1)[..., 0]
    loss = float(-np.mean(np.log(picked)))
    return Forward(X, H, Q, K, Qr, Kr, A, O, Z, probs, loss, angles)


def loss_and_grads(
    params: dict,
    tokens,
    config: Config,
    *,
    rope_backward: Callable[[np.ndarray, np.ndarray], np.ndarray] = unrotate,
) -> tuple[float, dict[str, np.ndarray]]:
    """The loss and the gradient of every parameter, by a backward pass written out by hand.

    ``rope_backward(grad, angles)`` undoes RoPE for a gradient (default :func:`unrotate`);
    notebook 10 swaps in a broken one to show the gradient check catching it.
    """
    f = forward(params, tokens, config)
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    d, D = config.width, config.distance
    n = B * (T - D)
    # cross-entropy of a softmax: probs - one_hot(target), at the scored positions only
    dZ = f.probs.copy()
    dZ[:, :D] = 0.0
    rows = np.arange(B)[:, None]
    cols = np.arange(D, T)[None, :]
    dZ[rows, cols, tokens[:, : T - D]] -= 1.0
    dZ /= n
    grads = {
        "W_o": _outer_sum(f.O, dZ),
        "b_o": dZ.sum(axis=(0, 1)),
    }
    dO = _project(dZ, params["W_o"].T)
    dA = _bmm(dO, np.swapaxes(f.X, 1, 2))
    # softmax backward, row by row: dS = A * (dA - sum(dA * A)); masked weights are 0
    dS = f.A * (dA - np.sum(dA * f.A, axis=-1, keepdims=True)) / np.sqrt(d)
    dQr = _bmm(dS, f.Kr)
    dKr = _bmm(np.swapaxes(dS, 1, 2), f.Qr)
    if config.method == "rope":
        dQ, dK = rope_backward(dQr, f.angles), rope_backward(dKr, f.angles)
    else:
        dQ, dK = dQr, dKr
    grads["W_q"] = _outer_sum(f.H, dQ)
    grads["W_k"] = _outer_sum(f.H, dK)
    if config.method == "learned":
        dH = _project(dQ, params["W_q"].T) + _project(dK, params["W_k"].T)
        dP = np.zeros_like(params["P"])
        rows_used = min(T, dP.shape[0])
        dP[:rows_used] = dH.sum(axis=0)[:rows_used]
        grads["P"] = dP
    return f.loss, grads


# Results of the pure, slow measurements below, by the content of their inputs. A notebook
# runs a check on its own inputs and then its claims table (``show("10")``) states the same
# check on equal inputs; within one process the second answer is the first one's copy. The
# measurements of a trained run are also kept in the results cache (:mod:`lessons.results_cache`),
# as the training is: the notebook's solution, their Chinese twins and ``python -m lessons.l13``
# read what the first of them measured with the same code.
_MEMO_SIZE = 64
_memo: OrderedDict = OrderedDict()


def _array_key(value: np.ndarray) -> tuple[str, tuple[int, ...], bytes]:
    """An array's dtype, shape and a digest of its bytes."""
    data = np.ascontiguousarray(value)
    return data.dtype.str, data.shape, hashlib.blake2b(data.tobytes(), digest_size=20).digest()


def _fingerprint(value):
    """A hashable stand-in for ``value``'s content: arrays by dtype, shape and a digest of their bytes."""
    if isinstance(value, np.ndarray):
        return ("array", *_array_key(value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _fingerprint(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_fingerprint(v) for v in value))
    hash(value)  # anything else stands for itself (a Config, a number, a function), if hashable
    return value


def _content_text(value) -> str:
    """``value``'s content as text that every process writes alike: the key of a cache entry.

    Arrays by dtype, shape and a digest of their bytes; a :class:`Config` and plain numbers
    and strings by their repr; a function of this module by its name. Anything else (a
    function written in a notebook, say) raises TypeError: its result is not kept on disk.
    """
    if isinstance(value, np.ndarray):
        dtype, shape, digest = _array_key(value)
        return f"array({dtype}, {shape}, {digest.hex()})"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: str(item[0]))
        return "{" + ", ".join(f"{str(k)!r}: {_content_text(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}(" + ", ".join(_content_text(v) for v in value) + ")"
    if isinstance(value, (Config, bool, int, float, str, np.integer, np.floating)) or value is None:
        return repr(value)
    if callable(value) and getattr(value, "__module__", None) == __name__ and "<" not in value.__qualname__:
        return f"{__name__}.{value.__qualname__}"
    raise TypeError(f"no content key for {type(value).__name__}")


def _to_arrays(result) -> dict[str, np.ndarray]:
    """A memoized result (a float, an array, or a dict of floats) as the named arrays of a cache entry."""
    if isinstance(result, dict):
        return {f"item_{k}": np.asarray(v) for k, v in result.items()}
    if isinstance(result, np.ndarray):
        return {"array": result}
    return {"float": np.asarray(float(result))}


def _from_arrays(arrays: dict[str, np.ndarray]):
    """The result that :func:`_to_arrays` stored (ValueError for an entry of another form)."""
    if set(arrays) == {"array"}:
        return arrays["array"]
    if set(arrays) == {"float"}:
        return float(arrays["float"])
    if arrays and all(k.startswith("item_") for k in arrays):
        return {k.removeprefix("item_"): float(v) for k, v in arrays.items()}
    raise ValueError(f"a cache entry of another form: {sorted(arrays)}")


def _memoized(name: str, inputs: tuple, compute: Callable[[], object], *, on_disk: bool = False):
    """``compute()``, or the result it gave before for inputs of equal content (a copy if a dict).

    With ``on_disk``, a result is also looked up in and stored to the results cache, under
    ``name`` and the inputs' :func:`_content_text` (not for inputs without one).
    """
    try:
        key = (name, _fingerprint(inputs))
    except TypeError:  # an input without a content key (unhashable, unusual): no memo
        return compute()
    if key in _memo:
        _memo.move_to_end(key)
    else:
        _memo[key] = _from_disk_or_computed(name, inputs, compute) if on_disk else compute()
        if len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    result = _memo[key]
    if isinstance(result, dict):
        return dict(result)
    return result.copy() if isinstance(result, np.ndarray) else result


def _from_disk_or_computed(name: str, inputs: tuple, compute: Callable[[], object]):
    try:
        disk_key = f"{name} {_content_text(inputs)}"
    except TypeError:
        return compute()
    stored = results_cache.load(CACHE_MODULE, disk_key)
    if stored is not None:
        try:
            return _from_arrays(stored)
        except ValueError:  # an entry of another form: compute it again
            pass
    result = compute()
    results_cache.store(CACHE_MODULE, disk_key, _to_arrays(result))
    return result


def gradient_check(
    params: dict,
    tokens,
    config: Config,
    *,
    eps: float = 1e-6,
    rope_backward: Callable[[np.ndarray, np.ndarray], np.ndarray] = unrotate,
) -> dict[str, float]:
    """The largest relative error of each parameter's gradient against central differences.

    For every entry p: (loss(p + eps) - loss(p - eps)) / (2 eps), compared with the
    hand-written gradient as max|numeric - analytic| / max(max|numeric|, 1e-12).
    Inputs of equal content (and the same ``rope_backward`` function) give the answer of
    the first such call in this process without recomputing it, or of the results cache when
    ``rope_backward`` is this module's :func:`rotate` or :func:`unrotate`.
    """
    return _memoized("gradient_check", (params, tokens, config, eps, rope_backward),
                     lambda: _gradient_check(params, tokens, config, eps, rope_backward), on_disk=True)


def _gradient_check(params, tokens, config, eps, rope_backward) -> dict[str, float]:
    _, grads = loss_and_grads(params, tokens, config, rope_backward=rope_backward)
    errors = {}
    for name, value in params.items():
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            old = value[index]
            value[index] = old + eps
            up = forward(params, tokens, config).loss
            value[index] = old - eps
            down = forward(params, tokens, config).loss
            value[index] = old
            numeric[index] = (up - down) / (2 * eps)
        scale = max(float(np.max(np.abs(numeric))), 1e-12)
        errors[name] = float(np.max(np.abs(numeric - grads[name]))) / scale
    return errors


@dataclass
class Run:
    """A finished training run: the config, the trained parameters, the loss per step, seconds."""

    config: Config
    params: dict
    losses: np.ndarray
    seconds: float
    tokens_seen: int


def _check_run(run) -> Run:
    """``run`` as a trained :class:`Run`; a Config (not trained yet) or anything else is refused by name."""
    if isinstance(run, Run):
        return run
    hint = ": train it first, with run_of(config) or train(config)" if isinstance(run, Config) else ""
    raise TypeError(f"run must be a Run (what train or run_of returns); got {type(run).__name__}{hint}")


def _check_config(config) -> Config:
    """``config`` as a :class:`Config`; a Run (which holds one) or anything else is refused by name."""
    if isinstance(config, Config):
        return config
    hint = ": pass run.config" if isinstance(config, Run) else ""
    raise TypeError(f"config must be a Config; got {type(config).__name__}{hint}")


def _check_length(length, config: Config) -> int:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length <= config.distance:
        raise ValueError(f"length must be an integer above the distance {config.distance}; got {length!r}")
    return int(length)


ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


def _adam_step(params: dict, grads: dict, m: dict, v: dict, step: int, lr: float) -> None:
    """One Adam update of every parameter in place (``m``, ``v``: its moment estimates;
    ``step`` counts from 1). :func:`train` and :func:`train_seeds` share it: the same
    arithmetic, element by element, whether a parameter has a leading seed axis or not."""
    b1, b2 = ADAM_BETAS
    for k, g in grads.items():
        m[k] = b1 * m[k] + (1 - b1) * g
        v[k] = b2 * v[k] + (1 - b2) * g * g
        m_hat = m[k] / (1 - b1**step)
        v_hat = v[k] / (1 - b2**step)
        params[k] -= lr * m_hat / (np.sqrt(v_hat) + ADAM_EPS)


def train(config: Config) -> Run:
    """Train with Adam (betas 0.9, 0.999) on fresh random sequences every step, seeded."""
    _check_config(config)
    params = init_params(config)
    rng = np.random.default_rng([config.seed, 2])
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    losses = np.empty(config.steps)
    seen = 0
    start = time.perf_counter()
    for step in range(1, config.steps + 1):
        length = config.train_length if config.lengths is None else int(rng.choice(config.lengths))
        tokens = random_tokens(rng, config.batch, length, config.vocab)
        seen += tokens.size
        loss, grads = loss_and_grads(params, tokens, config)
        losses[step - 1] = loss
        _adam_step(params, grads, m, v, step, config.lr)
    return Run(config, params, losses, time.perf_counter() - start, seen)


def _softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, without input checks (the training loop's inner step)."""
    e = x - x.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _loss_and_grads_seeds(params: dict, tokens: np.ndarray, config: Config) -> tuple[np.ndarray, dict]:
    """:func:`loss_and_grads` for several runs at once: every parameter has a leading seed
    axis [S, ...] and ``tokens`` is [S, B, T] (run s reads tokens[s]). The same formulas, in
    the same order; runs do not mix (a test checks it against separate runs). Returns the
    S losses and the gradients, each with its seed axis.
    """
    S, B, T = tokens.shape
    V, d, D = config.vocab, config.width, config.distance
    X = _constant("one_hot", V)[tokens]  # [S, B, T, V]
    if config.method == "sinusoidal":
        H = X + _constant("sinusoidal", T, V, config.base)
    elif config.method == "learned":
        rows = min(T, params["P"].shape[1])
        H = X.copy()
        H[:, :, :rows] += params["P"][:, None, :rows]
    else:
        H = X
    H2 = H.reshape(S, B * T, V)
    Q = (H2 @ params["W_q"]).reshape(S * B, T, d)
    K = (H2 @ params["W_k"]).reshape(S * B, T, d)
    if config.method == "rope":
        angles = rope_angles(config, T)
        Qr, Kr = rotate(Q, angles), rotate(K, angles)
    else:
        Qr, Kr = Q, K
    scores = Qr @ np.swapaxes(Kr, 1, 2)
    scores /= np.sqrt(d)
    scores += _constant("mask", T)
    A = _softmax(scores)  # [S*B, T, T]
    Xb = X.reshape(S * B, T, V)
    O = (A @ Xb).reshape(S, B * T, V)  # noqa: E741
    probs = _softmax(O @ params["W_o"] + params["b_o"][:, None, :]).reshape(S, B, T, V)
    targets = tokens[:, :, : T - D]
    picked = np.take_along_axis(probs[:, :, D:], targets[..., None], axis=-1)[..., 0]
    losses = -np.log(picked).reshape(S, -1).mean(axis=1)
    # backward, as in loss_and_grads
    dZ = probs
    dZ[:, :, :D] = 0.0
    s_idx = np.arange(S)[:, None, None]
    b_idx = np.arange(B)[None, :, None]
    t_idx = np.arange(D, T)[None, None, :]
    dZ[s_idx, b_idx, t_idx, targets] -= 1.0
    dZ /= B * (T - D)
    dZ = dZ.reshape(S, B * T, V)
    grads = {"W_o": np.swapaxes(O, 1, 2) @ dZ, "b_o": dZ.sum(axis=1)}
    dA = (dZ @ np.swapaxes(params["W_o"], 1, 2)).reshape(S * B, T, V) @ np.swapaxes(Xb, 1, 2)
    dS = dA  # in place: A * (dA - sum(dA * A)) / sqrt(d)
    dS -= np.sum(dA * A, axis=-1, keepdims=True)
    dS *= A
    dS /= np.sqrt(d)
    dQ, dK = dS @ Kr, np.swapaxes(dS, 1, 2) @ Qr
    if config.method == "rope":
        dQ, dK = unrotate(dQ, angles), unrotate(dK, angles)
    dQ, dK = dQ.reshape(S, B * T, d), dK.reshape(S, B * T, d)
    H2t = np.swapaxes(H2, 1, 2)
    grads["W_q"], grads["W_k"] = H2t @ dQ, H2t @ dK
    if config.method == "learned":
        dH = dQ @ np.swapaxes(params["W_q"], 1, 2) + dK @ np.swapaxes(params["W_k"], 1, 2)
        dP = np.zeros_like(params["P"])
        dP[:, :rows] = dH.reshape(S, B, T, V).sum(axis=1)[:, :rows]
        grads["P"] = dP
    return losses, grads


def train_seeds(config: Config, seeds: tuple[int, ...]) -> tuple[Run, ...]:
    """One run per seed, the same as ``train(replace(config, seed=s))`` for each s (a test
    checks the losses), trained side by side: every parameter gets a leading seed axis, each
    seed keeps its own initial parameters and its own stream of training sequences, and numpy
    pays its per-call cost once per step instead of once per seed. Each run's ``seconds`` is
    its share of the joint training time.

    A config whose ``lengths`` vary draws a length per seed and step, so its seeds are
    trained one after another with :func:`train`.
    """
    _check_config(config)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed; got an empty tuple")
    if config.lengths is not None and len(set(config.lengths)) > 1:
        return tuple(train(replace(config, seed=s)) for s in seeds)
    length = config.train_length if config.lengths is None else config.lengths[0]
    inits = [init_params(replace(config, seed=s)) for s in seeds]
    params = {k: np.stack([p[k] for p in inits]) for k in inits[0]}
    rngs = [np.random.default_rng([s, 2]) for s in seeds]
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    losses = np.empty((len(seeds), config.steps))
    start = time.perf_counter()
    for step in range(1, config.steps + 1):
        if config.lengths is not None:
            for rng in rngs:  # keep each stream where train() would have it
                rng.choice(config.lengths)
        tokens = np.stack([random_tokens(rng, config.batch, length, config.vocab) for rng in rngs])
        losses[:, step - 1], grads = _loss_and_grads_seeds(params, tokens, config)
        _adam_step(params, grads, m, v, step, config.lr)
    seconds = (time.perf_counter() - start) / len(seeds)
    seen = config.steps * config.batch * length
    return tuple(
        Run(replace(config, seed=s), {k: p[i].copy() for k, p in params.items()}, losses[i], seconds, seen)
        for i, s in enumerate(seeds)
    )


def predict(params: dict, tokens, config: Config) -> np.ndarray:
    """The predicted token at every position (argmax of the read-out), [B, T]."""
    return np.argmax(forward(params, tokens, config).Z, axis=-1)


def test_sequences(length: int) -> int:
    """How many test sequences at a length: about 4096 tokens in all, at least 16 sequences."""
    return max(16, 4096 // length)


def test_tokens(length: int, vocab: int, *, sequences: int | None = None, seed: int = 1234) -> np.ndarray:
    """The test sequences of a length: their own seed, the same for every run."""
    sequences = test_sequences(length) if sequences is None else sequences
    return random_tokens(np.random.default_rng([seed, length]), sequences, length, vocab)


def correct(run: Run, length: int, *, sequences: int | None = None, seed: int = 1234) -> np.ndarray:
    """[sequences, length - D] booleans: is the prediction at t >= D the token D back?

    Evaluated in chunks of about a million attention weights, to keep memory small at 256.
    A run of equal content, measured the same way, gives the first such answer (of this
    process or of the results cache) without recomputing it.
    """
    _check_length(length, _check_run(run).config)
    return _memoized("correct", (run.config, run.params, length, sequences, seed),
                     lambda: _correct(run, length, sequences, seed), on_disk=True)


def _correct(run: Run, length: int, sequences: int | None, seed: int) -> np.ndarray:
    c = run.config
    _check_length(length, c)
    sequences = test_sequences(length) if sequences is None else sequences
    tokens = test_tokens(length, c.vocab, sequences=sequences, seed=seed)
    chunk = max(1, 2**20 // (length * length))
    parts = [predict(run.params, tokens[i : i + chunk], c) for i in range(0, sequences, chunk)]
    return np.concatenate(parts)[:, c.distance :] == tokens[:, : length - c.distance]


def accuracy(run: Run, length: int, *, sequences: int | None = None, seed: int = 1234) -> float:
    """Share of positions t >= D whose prediction is the token D back, on fresh sequences."""
    _check_run(run)
    return float(_correct(run, length, sequences, seed).mean())


def attention_weights(run: Run, tokens) -> np.ndarray:
    """The trained head's attention weights on ``tokens`` [B, T]: [B, T, T]."""
    _check_run(run)
    return forward(run.params, tokens, run.config).A


def pair_score_by_distance(run: Run, distances) -> np.ndarray:
    """RoPE head: the score (before the softmax) against the distance back, averaged over tokens.

    For pair i the score of a query token a and a key token b at distance Delta is
    Re(q_i(a) conj(k_i(b)) e^{i Delta omega_i}) / sqrt(d). At a distance of 1 or more the key
    is another token, drawn independently of the query's, so the average over all a, b uses
    c_i = mean_a q_i(a) * conj(mean_b k_i(b)) (:func:`pair_coefficients`). At distance 0 the
    key is the query's own token, and the average is over a alone:
    mean_a q_i(a) * conj(k_i(a)) (:func:`own_token_coefficients`). ``distances`` is one
    number or a 1-D array of them. Returns [len(distances), d/2] (one row for one number):
    one column per pair; their sum over pairs is the average score profile.
    """
    _check_run(run)
    delta = np.atleast_1d(as_float_array(distances, "distances", min_ndim=0))
    if delta.ndim != 1:
        raise ValueError(f"distances must be one number or a 1-D array of distances; got shape {delta.shape}")
    c = np.where(delta[:, None] == 0, own_token_coefficients(run)[None, :], pair_coefficients(run)[None, :])
    omega = pair_frequencies(run.config.width, run.config.base)
    return np.real(c * np.exp(1j * delta[:, None] * omega[None, :])) / np.sqrt(run.config.width)


def token_pair_scores(run: Run, distance: float, pairs=None) -> np.ndarray:
    """RoPE head: [V, V] scores (before the softmax) of a query holding token a and a key
    holding token b, ``distance`` back, summed over ``pairs`` (default: all of them).

    Entry [a, b] is sum_i Re(q_i(a) conj(k_i(b)) e^{i distance omega_i}) / sqrt(d). Its
    diagonal is a key that holds the query's own token; the averages of
    :func:`pair_score_by_distance` leave that content apart from distance 0.
    """
    _check_run(run)
    zq, zk = _pair_parts(run)
    omega = pair_frequencies(run.config.width, run.config.base)
    chosen = np.arange(len(omega)) if pairs is None else np.asarray(pairs, dtype=int)
    turn = np.exp(1j * as_number(distance, "distance") * omega[chosen])
    scores = np.einsum("ai,bi,i->ab", zq[:, chosen], np.conj(zk[:, chosen]), turn)
    return np.real(scores) / np.sqrt(run.config.width)


def _pair_parts(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Each token's query and key, pair i read as a complex number: two [V, d/2] arrays."""
    _check_run(run)
    if run.config.method != "rope":
        raise ValueError(f"pair coefficients need a RoPE run; got method {run.config.method!r}")
    Wq, Wk = run.params["W_q"], run.params["W_k"]
    return Wq[:, 0::2] + 1j * Wq[:, 1::2], Wk[:, 0::2] + 1j * Wk[:, 1::2]


def pair_coefficients(run: Run) -> np.ndarray:
    """c_i = mean over query tokens of q_i times the conjugate of the mean key k_i (complex, [d/2]).

    A pair's score at a distance Delta of 1 or more (the key another token than the query's,
    drawn independently) is Re(c_i e^{i Delta omega_i}), averaged over tokens: |c_i| is how
    much the pair contributes, and the angle of c_i where it peaks. The hand-built look-back
    head of ``05`` has c_i = e^{-i D omega_i} in every pair: a peak at Delta = D in every pair.
    """
    zq, zk = _pair_parts(run)
    return zq.mean(axis=0) * np.conj(zk.mean(axis=0))


def own_token_coefficients(run: Run) -> np.ndarray:
    """mean over tokens a of q_i(a) times the conjugate of k_i(a) (complex, [d/2]): a pair's
    average score at distance 0, where the key is the query's own token, is its real part."""
    zq, zk = _pair_parts(run)
    return (zq * np.conj(zk)).mean(axis=0)


def look_back_coefficients(config: Config) -> np.ndarray:
    """The hand-built look-back head of ``05`` as pair coefficients: c_i = e^{-i D omega_i}.

    Its query is :func:`lessons.head.look_back_query` and its keys hold (1, 0) in every pair,
    so c_i is the query's pair i read as a complex number: every pair peaks D back.
    """
    _check_config(config)
    q = look_back_query(config.width, config.distance, config.base)
    return q[0::2] + 1j * q[1::2]


def peak_distance(run: Run, max_distance: int, *, min_distance: int = 0) -> int:
    """The distance back, in min_distance .. max_distance, where the token-averaged score peaks."""
    _check_run(run)
    distances = np.arange(min_distance, max_distance + 1)
    return int(distances[np.argmax(pair_score_by_distance(run, distances).sum(axis=1))])


LENGTHS = (16, 64, 256)
SEEDS = (0, 1, 2, 3, 4)
REMEDY_LENGTH = 64


def remedy_config(method: str) -> Config:
    """The remedy: train at length 64 with a quarter of the batch (the same tokens per step)."""
    base = Config(method=method)
    return replace(base, train_length=REMEDY_LENGTH, batch=base.batch * base.train_length // REMEDY_LENGTH)


def score_entries_per_step(config: Config) -> int:
    """Entries of the [B, T, T] score table of one training step (the attention's cost)."""
    _check_config(config)
    length = config.table_rows
    return config.batch * length * length


def tokens_per_step(config: Config) -> int:
    """Tokens in one training batch (at the longest training length)."""
    _check_config(config)
    return config.batch * config.table_rows


def far_attention_share(run: Run, *, length: int = 256, first_query: int = 128, sequences: int = 16) -> float:
    """Mean attention weight on keys more than train_length - 1 back, for queries first_query ..

    Measured on the first ``sequences`` test sequences of ``length``: the share of each
    query's attention that lands on a distance the model never saw in training. A run of
    equal content, measured the same way, gives the first such answer (of this process or of
    the results cache) without recomputing it.
    """
    _check_run(run)
    return _memoized("far_attention_share", (run.config, run.params, length, first_query, sequences),
                     lambda: _far_attention_share(run, length, first_query, sequences), on_disk=True)


def _far_attention_share(run: Run, length: int, first_query: int, sequences: int) -> float:
    c = run.config
    tokens = test_tokens(length, c.vocab)[:sequences]
    A = attention_weights(run, tokens)
    seen = c.table_rows - 1
    shares = [A[:, t, : t - seen].sum(axis=-1).mean() for t in range(first_query, length)]
    return float(np.mean(shares))


@dataclass(frozen=True)
class SweepResult:
    """Accuracies [len(seeds), len(lengths)] of one config over seeds, and the runs."""

    config: Config
    seeds: tuple[int, ...]
    lengths: tuple[int, ...]
    accuracies: np.ndarray
    runs: tuple[Run, ...] = field(repr=False)

    def median(self) -> np.ndarray:
        return np.median(self.accuracies, axis=0)

    def low(self) -> np.ndarray:
        return self.accuracies.min(axis=0)

    def high(self) -> np.ndarray:
        return self.accuracies.max(axis=0)


@functools.cache
def sweep(config: Config, seeds: tuple[int, ...] = SEEDS, lengths: tuple[int, ...] = LENGTHS) -> SweepResult:
    """Train ``config`` once per seed and measure each run at each length.

    Cached per process, and on disk (:mod:`lessons.results_cache`): a notebook, its solution,
    their Chinese twins and ``python -m lessons.l13`` share one training per version of this
    module's code. A result read from the cache is what :func:`_compute_sweep` returns, array
    for array (a test checks it).
    """
    seeds, lengths = tuple(int(s) for s in seeds), tuple(int(n) for n in lengths)
    key = repr((config, seeds, lengths))
    stored = results_cache.load(CACHE_MODULE, key)
    if stored is not None:
        try:
            return _unpack_sweep(config, seeds, lengths, stored)
        except (KeyError, ValueError):  # an entry of another shape: compute it again
            pass
    result = _compute_sweep(config, seeds, lengths)
    results_cache.store(CACHE_MODULE, key, _pack_sweep(result))
    return result


CACHE_MODULE = __name__.removeprefix("lessons.")  # how results_cache names this module


def _compute_sweep(config: Config, seeds: tuple[int, ...], lengths: tuple[int, ...]) -> SweepResult:
    runs = train_seeds(config, seeds)
    acc = np.array([[accuracy(r, n) for n in lengths] for r in runs])
    return SweepResult(config, seeds, lengths, acc, runs)


def _pack_sweep(result: SweepResult) -> dict[str, np.ndarray]:
    """A sweep as named arrays (parameters stacked along a leading seed axis)."""
    runs = result.runs
    arrays = {
        "accuracies": result.accuracies,
        "losses": np.stack([r.losses for r in runs]),
        "seconds": np.array([r.seconds for r in runs]),
        "tokens_seen": np.array([r.tokens_seen for r in runs]),
    }
    for name in runs[0].params:
        arrays[f"param_{name}"] = np.stack([r.params[name] for r in runs])
    return arrays


def _unpack_sweep(config: Config, seeds, lengths, arrays: dict[str, np.ndarray]) -> SweepResult:
    accuracies = arrays["accuracies"]
    if accuracies.shape != (len(seeds), len(lengths)):
        raise ValueError(f"a stored sweep of shape {accuracies.shape}; expected {(len(seeds), len(lengths))}")
    names = [k.removeprefix("param_") for k in arrays if k.startswith("param_")]
    runs = tuple(
        Run(replace(config, seed=s), {n: arrays[f"param_{n}"][i].copy() for n in names},
            arrays["losses"][i].copy(), float(arrays["seconds"][i]), int(arrays["tokens_seen"][i]))
        for i, s in enumerate(seeds)
    )
    return SweepResult(config, seeds, lengths, accuracies.copy(), runs)


def run_of(config: Config) -> Run:
    """The run of ``config`` (its seed's run in the cached :func:`sweep` when there is one)."""
    _check_config(config)
    result = sweep(replace(config, seed=SEEDS[0]))
    if config.seed in result.seeds:
        return result.runs[result.seeds.index(config.seed)]
    return train(config)


def with_method(config: Config, method: str) -> Config:
    """The same budget with another position method."""
    _check_config(config)
    return replace(config, method=method)
