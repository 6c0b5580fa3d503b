"""Notebooks 07-09: the low-precision helpers, and the corrections a test can see in the notebooks."""

from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.claims.nb08 import correct_change, shift_change
from lessons.frequencies import angle_table, pair_frequencies
from lessons.precision import (
    angles_in,
    positions_rounding_to,
    rotate_with_angles,
    round_to,
    to_bfloat16,
    to_float16,
)
from lessons.rope import rope_rotate

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))


def _cells(path, kind=None):
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if kind is None or c.cell_type == kind]


def _outputs_text(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif "data" in o:
            out.append(o["data"].get("text/plain", ""))
            out.append(o["data"].get("text/html", ""))
    return "".join(out)


# ---- bfloat16 / float16 emulation ----------------------------------------------------------

def _bfloat16_by_hand(x: float) -> float:
    """The nearest value with 8 significant bits, ties to the even last bit: from frexp, no bit tricks."""
    if x == 0:
        return 0.0
    mantissa, exponent = np.frexp(np.float32(x))          # x = mantissa * 2^exponent, 0.5 <= |m| < 1
    scaled = float(mantissa) * 2**8                       # 8 significant bits left of the point
    kept = np.round(scaled)                               # numpy rounds half to even
    return float(np.ldexp(kept / 2**8, int(exponent)))


def test_bfloat16_positions_near_4096():
    assert to_bfloat16(np.arange(4090, 4113)).tolist() == [4096.0] * 23
    assert positions_rounding_to(4096, "bfloat16").tolist() == list(range(4088, 4113))
    # the neighbours of the block go to the next representable values
    assert to_bfloat16([4087.0, 4113.0]).tolist() == [4080.0, 4128.0]
    assert f"{np.cos(float(to_bfloat16(4100.0))):.8f}" == "0.80399061"
    assert f"{np.cos(4100.0):.8f}" == "-0.97554988"


def test_bfloat16_ties_go_to_even():
    one = 1.0
    assert float(to_bfloat16(one + 2.0**-8)) == 1.0                       # tie: 1 has an even last bit
    assert float(to_bfloat16(one + 3 * 2.0**-8)) == one + 2.0**-6         # tie: up to the even neighbour
    assert float(to_bfloat16(one + 2.0**-8 + 2.0**-20)) == one + 2.0**-7  # just past the tie: up


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-(2.0**127), max_value=2.0**127, allow_nan=False, allow_infinity=False, width=32))
def test_bfloat16_is_the_nearest_8_bit_value(x):
    got = to_bfloat16(x)
    assert got.dtype == np.float32
    assert int(got.view(np.uint32)) & 0xFFFF == 0, "a bfloat16 value has its low 16 bits zero"
    if abs(x) > 1e-37:  # normal numbers: compare with the frexp construction
        assert float(got) == _bfloat16_by_hand(x)


def test_bfloat16_special_values():
    got = to_bfloat16([np.nan, np.inf, -np.inf, 0.0, -0.0])
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf and got[3] == 0 and got[4] == 0
    assert to_bfloat16(3.4e38) == np.inf, "past bfloat16's largest finite value"


def test_float16_and_significant_bits():
    assert to_float16([4096.0, 4097.0, 4098.0, 4099.0]).tolist() == [4096.0, 4096.0, 4096.0, 4100.0]
    for dtype, bits in (("float32", 24), ("float16", 11), ("bfloat16", 8)):
        n = 2.0**bits
        assert float(round_to(n, dtype)) == n and float(round_to(n + 1, dtype)) != n + 1, dtype
        assert np.all(round_to(np.arange(1.0, n + 1), dtype) == np.arange(1.0, n + 1)), dtype


def test_angles_in_low_precision_merge_neighbouring_positions():
    positions = np.arange(4090, 4096)
    expected = angle_table(positions, pair_frequencies(8))
    np.testing.assert_array_equal(angles_in("float64", positions, 8), expected)
    bf16 = angles_in("bfloat16", positions, 8)
    assert np.all(bf16 == bf16[0]), "bfloat16 gives all six positions the angles of 4096"
    assert len(np.unique(angles_in("float32", positions, 8)[:, 0])) == 6


def test_rotate_with_angles_is_rope_rotate_given_its_angles():
    x = np.random.default_rng(3).normal(size=(2, 5, 8))
    positions = np.array([0, 3, 17, 400, 4095])
    np.testing.assert_allclose(
        rotate_with_angles(x, angle_table(positions, pair_frequencies(8))), rope_rotate(x, positions),
        rtol=0, atol=1e-12,
    )


def test_precision_helpers_refuse_bad_input():
    with pytest.raises(ValueError, match="dtype must be one of"):
        round_to(1.0, "float8")
    with pytest.raises(ValueError, match=r"angles must have shape \(T, d/2\)"):
        rotate_with_angles(np.ones((3, 4)), np.ones((3, 3)))
    with pytest.raises(TypeError, match="x must"):
        to_bfloat16("4096")


# ---- the shift check's blind spots (08) ----------------------------------------------------

@pytest.mark.parametrize(
    "mistake",
    [
        {"layout": "split_half"},
        {"sign": -1.0},
        {"base": 500000.0},
        {"start": 4090, "angle_dtype": "bfloat16"},
    ],
)
def test_shift_check_passes_mistakes_that_keep_distances(mistake):
    assert shift_change(**mistake) < 1e-12
    assert correct_change(**mistake) > 0.2, "the reference comparison sees the mistake"


def test_shift_check_and_reference_see_a_wrong_rotary_width():
    assert shift_change() < 1e-12                       # full-width code passes the shift check
    assert correct_change(reference={"rotary_dim": 4}) > 0.3


# ---- corrections visible in the notebooks --------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_notebook_prints_zero_filled_padding_positions(path):
    for cell in _cells(path, "code"):
        assert "[0 0 0 1 2]" not in _outputs_text(cell), "padded slots are filled with 1: [1 1 0 1 2]"


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_08_padding_reset_sign_and_deliberate_error(folder):
    path = ROOT / folder / "08_layouts_caches_and_failures.ipynb"
    cells = _cells(path)
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    outputs = "\n".join(_outputs_text(c) for c in cells if c.cell_type == "code")
    assert "[1 1 0 1 2]" in outputs and "[1, 1, 0, 1, 2]" in prose
    assert "-0.84147098" in outputs and "+0.84147098" in outputs
    assert cells[0].source.startswith("# 08 — Layouts, caches and seven silent failures")
    assert "five silent failures" not in prose.lower()
    # the cell that fails on purpose is announced in the prose just before it
    failing = [i for i, c in enumerate(cells)
               if "raises-exception" in c.metadata.get("tags", []) and "check_within_trained" in c.source]
    assert len(failing) == 1
    before = cells[failing[0] - 1]
    assert before.cell_type == "markdown"
    assert "fails on purpose" in before.source and "ValueError: position 8191" in before.source


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_07_and_09_corrections_are_in_the_prose(folder):
    prose07 = "\n".join(c.source for c in _cells(ROOT / folder / "07_added_vs_rotated.ipynb", "markdown"))
    assert "the structure, one term per absolute position, is\nthe same" not in prose07
    assert "simplified" in prose07 and "RoFormer" in prose07 and "ALiBi" in prose07
    prose09 = "\n".join(c.source for c in _cells(ROOT / folder / "09_longer_contexts.ipynb", "markdown"))
    assert "just above the last" not in prose09
    assert "neural tangent kernel" in prose09
    assert "often set a little larger" not in prose09, "unsourced advice"
    assert "every** forward pass" in prose09
