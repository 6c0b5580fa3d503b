"""What a learner sees in JupyterLab, checked in a real browser, and the figure house style.

The first part needs no browser: :mod:`lessons.figures.style` measures the text of a figure
as drawn and rejects text that is too small or clipped.

The second part runs ``tools/check_in_jupyterlab.py`` once over every notebook of the
course (``notebooks/`` and ``solutions/``, and the Chinese edition's ``notebooks/zh/`` and
``solutions/zh/``, found by glob), a notebook made here with deliberately tiny and clipped
text, one with a character no font has, and the static site: each notebook is opened
untrusted, restarted and run, and its images, errors, animation, sliders, picture text,
claims table and glyphs are checked. A Chinese notebook is checked "light": opened untrusted
and checked as stored (cells, images, errors, claims table, glyphs), not run again (its code
cells are its English twin's, run here, and nbval runs it); it needs a font for Chinese
(Debian: ``apt-get install fonts-noto-cjk``). It needs Debian's
Chromium (``apt-get install chromium``) and the ``browser`` extra (Playwright). Without them
the tests are skipped with the reason; with ``CI=true`` they fail instead.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

from lessons.figures import style  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "check_in_jupyterlab.py"
CHROMIUM = Path(os.environ.get("L13_CHROMIUM", "/usr/bin/chromium"))
IN_CI = os.environ.get("CI", "").lower() == "true"
ENGLISH = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))
CHINESE = [p for folder in ("notebooks", "solutions") for p in sorted((ROOT / folder / "zh").glob("*.ipynb"))]
NOTEBOOKS = ENGLISH + CHINESE
BAD = "tiny_and_clipped_text.ipynb"
TOFU = "missing_glyph.ipynb"
NO_GLYPH = "\U00030000"  # CJK Extension G (Unicode 13): no font of Debian's fonts-noto-cjk draws it


# ------------------------------------------------------------------ the house style, measured


@pytest.fixture
def figure():
    fig, ax = style.new_figure()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set_title("a readable title")
    ax.set_xlabel("x (units)")
    yield fig, ax
    plt.close(fig)


def test_a_figure_in_the_house_style_passes(figure):
    fig, ax = figure
    style.legend_outside(ax)
    report = style.check_readable(fig)
    assert report.dpi == style.DPI
    assert {"a readable title", "x (units)", "a line"} <= {t.text for t in report.texts}
    assert report.smallest.pixels >= style.MIN_TEXT_PX


def test_tiny_text_is_rejected(figure):
    fig, ax = figure
    ax.text(0.5, 0.5, "tiny words", fontsize=5)
    with pytest.raises(AssertionError, match=r"'tiny words' is 6\.9 px on screen \(5 pt at 100 dpi"):
        style.check_readable(fig)


def test_text_shrunk_by_the_page_is_rejected(figure):
    fig, _ = figure
    report = style.text_report(fig)
    smallest = report.smallest.pixels
    assert report.problems(scale=1.0) == []
    shrunk = report.problems(scale=0.9 * style.MIN_TEXT_PX / smallest)
    assert shrunk and all("px on screen" in p for p in shrunk)


def test_text_cut_by_its_axes_is_rejected(figure):
    fig, ax = figure
    ax.text(0.95, 0.5, "a label cut by the axes", transform=ax.transAxes, clip_on=True)
    report = style.text_report(fig)
    assert [t.text for t in report.clipped] == ["a label cut by the axes"]
    assert report.clipped[0].cut_by_axes


def test_text_over_the_figure_edge_is_rejected(figure):
    fig, _ = figure
    fig.text(0.97, 0.5, "text that runs off the right edge")
    report = style.text_report(fig)
    assert [t.text for t in report.clipped] == ["text that runs off the right edge"]
    assert report.clipped[0].outside_figure


def test_the_report_travels_in_the_png(figure):
    fig, ax = figure
    ax.text(0.5, 0.5, "tiny words", fontsize=5)
    expected = style.text_report(fig)
    style.record_text_in_png()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    found = style.png_text_report(buffer.getvalue())

    def summary(report):  # (a later draw of a constrained layout may move a text by a fraction of a px)
        return [(t.text, t.points, t.outside_figure, t.cut_by_axes) for t in report.texts]

    assert summary(found) == summary(expected)
    assert found.problems() == expected.problems() != []
    assert style.png_text_report(b"not a png") is None


def test_the_style_is_in_rcparams_and_bad_sizes_are_named():
    assert matplotlib.rcParams["figure.dpi"] == style.DPI
    assert matplotlib.rcParams["xtick.labelsize"] == style.SMALL_FONT_SIZE >= style.MIN_FONT_SIZE
    assert style.pixels(style.MIN_FONT_SIZE) >= style.MIN_TEXT_PX  # the smallest allowed font is readable
    with pytest.raises(ValueError, match=r"width must be in \(0, 10.0\] inches; got 14.0"):
        style.new_figure(width=14)
    with pytest.raises(ValueError, match="where must be 'right' or 'below'; got 'inside'"):
        style.legend_outside(plt.gca(), where="inside")
    plt.close("all")


# ------------------------------------------------------------------ the browser check


def missing_prerequisite() -> str | None:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no Playwright for Python (pip install -e '.[browser]'; never 'playwright install')"
    return None


def test_a_missing_browser_is_named(monkeypatch, tmp_path):
    """Where Chromium is missing the reason names it (skipped on a developer's machine, failed in CI)."""
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    assert missing_prerequisite() == f"no Chromium at {tmp_path / 'no-chromium'} (apt-get install chromium)"


def load_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_in_jupyterlab", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_a_chinese_notebook_needs_a_font_for_chinese(monkeypatch, tmp_path):
    """Without a font for Chinese (``fc-list :lang=zh`` empty) a Chinese notebook fails, with the fix."""
    tool = load_tool()
    zh, en = tmp_path / "zh.ipynb", tmp_path / "en.ipynb"
    nb = nbformat.v4.new_notebook()
    nbformat.write(nb, en)
    nb.metadata["lessons"] = {"language": "zh_CN", "source": "notebooks/01.ipynb"}
    nbformat.write(nb, zh)
    assert (tool.notebook_language(zh), tool.notebook_language(en)) == ("zh_CN", "en")
    monkeypatch.setattr(tool, "fonts_for", lambda language: ((), ""))
    report = tool.Report()
    tool.check_fonts(report, "en.ipynb", tool.notebook_language(en))
    assert report.lines == []  # an English notebook needs no font for Chinese
    tool.check_fonts(report, "zh.ipynb", tool.notebook_language(zh))
    assert report.failures == 1 and report.lines == [
        "FAIL  zh.ipynb: a font for Chinese is installed (fc-list :lang=zh) "
        "(no font covers Chinese: apt-get install fonts-noto-cjk (Debian/Ubuntu))"]


def bad_notebook(directory: Path) -> Path:
    """A notebook whose second figure has tiny text and whose third has text cut by its axes,
    executed (as the course's notebooks are committed with their outputs)."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    figure = 'fig, ax = plt.subplots(figsize=(6, 3))\nax.plot([0, 1], [0, 1])\nax.set_title("{title}")\n'
    tiny = 'ax.text(0.5, 0.5, "tiny words", fontsize=4)\n'
    clipped = 'ax.text(0.9, 0.5, "a label cut by the axes", transform=ax.transAxes, clip_on=True)\n'
    nb.cells = [
        nbformat.v4.new_markdown_cell("Figures: readable, tiny text, text cut by its axes.", id="intro"),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\n" + figure.format(title="readable")
                                  + "plt.show()", id="good"),
        nbformat.v4.new_code_cell(figure.format(title="tiny") + tiny + "plt.show()", id="tiny"),
        nbformat.v4.new_code_cell(figure.format(title="clipped") + clipped + "plt.show()", id="clipped"),
    ]  # fmt: skip
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    path = directory / BAD
    nbformat.write(nb, path)
    return path


def tofu_notebook(directory: Path) -> Path:
    """A Chinese notebook whose prose holds one character that no installed font draws."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["lessons"] = {"language": "zh_CN", "source": "a test's notebook"}
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 缺字测试\n\n这一段有一个没有字体的字：{NO_GLYPH}。", id="prose"),
        nbformat.v4.new_code_cell("print(1 + 1)", id="code"),
    ]  # fmt: skip
    path = directory / TOFU
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def browser_run(tmp_path_factory):
    reason = missing_prerequisite()
    if reason:
        if IN_CI:
            pytest.fail(f"the browser check must run in CI: {reason}")
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("browser")
    from lessons import site

    site.build(work / "site")
    bad = bad_notebook(work)
    tofu = tofu_notebook(work)
    report = work / "report.json"
    command = [sys.executable, str(TOOL), *map(str, NOTEBOOKS), str(bad), str(tofu),
               "--site", str(work / "site"), "--json-report", str(report),
               "--screenshots", str(work / "shots"), "--chromium", str(CHROMIUM), "--light-translations"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600)  # fmt: skip
    (work / "output.txt").write_text(result.stdout + result.stderr, encoding="utf-8")
    assert report.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    print(f"browser check: {data['seconds']} s for {len(NOTEBOOKS) + 2} notebooks and the site")
    return data, result


def failures(checks: list[dict]) -> list[str]:
    return [f"{c['name']}: {c['detail']}" for c in checks if not c["ok"]]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_in_jupyterlab(browser_run, notebook):
    data, _ = browser_run
    label = notebook.relative_to(ROOT).as_posix()  # the tool labels a notebook by its path
    checks = data["notebooks"].get(label)
    assert checks, f"{label} was not checked"
    assert failures(checks["checks"]) == []
    names = [c["name"] for c in checks["checks"]]
    if notebook in CHINESE:  # checked light: opened untrusted, as stored (its English twin is run)
        assert "opened untrusted: images shown" in names
        assert "a font for Chinese is installed (fc-list :lang=zh)" in names
        assert "opened untrusted: every character has a glyph (no tofu boxes)" in names
        return
    assert "Restart Kernel and Run All Cells finishes" in names
    assert any("picture text at least" in n for n in names)
    assert "after run all: every character has a glyph (no tofu boxes)" in names


def test_the_chinese_edition_is_checked():
    """Every Chinese notebook is in the run, beside its English twin."""
    assert CHINESE, "no notebooks/zh/*.ipynb: generate the Chinese edition (python -m lessons.i18n build)"
    assert [p.name for p in CHINESE] == [p.name for p in ENGLISH]


def test_the_check_rejects_a_character_without_a_glyph(browser_run):
    data, result = browser_run
    checks = data["notebooks"][f"outside/{TOFU}"]["checks"]
    glyphs = [c for c in checks if "no tofu" in c["name"]]
    assert len(glyphs) == 1 and glyphs[0]["ok"] is False
    assert glyphs[0]["detail"].startswith(f"no glyph for {NO_GLYPH!r} U+30000 in cell 0 (font: ")
    assert failures(checks) == [f"{glyphs[0]['name']}: {glyphs[0]['detail']}"]  # the rest of it passes
    fonts = [c for c in checks if c["name"] == "a font for Chinese is installed (fc-list :lang=zh)"]
    assert len(fonts) == 1 and fonts[0]["ok"]
    assert result.returncode == 1


def test_02_animation_still_when_untrusted_plays_when_run_and_every_slider_changes_its_picture(browser_run):
    data, _ = browser_run
    notebook = data["notebooks"]["notebooks/02_radians_and_relative_position.ipynb"]
    checks = {c["name"]: c["ok"] for c in notebook["checks"]}
    assert checks["opened untrusted: the animation shows no controls that cannot work"] is True
    assert checks["animation: 'Play' advances the frames"] is True
    moved = [ok for name, ok in checks.items() if name.startswith("widgets: widget 1: moving slider")]
    assert moved == [True, True]


def test_the_check_rejects_tiny_and_clipped_text(browser_run):
    data, result = browser_run
    checks = data["notebooks"][f"outside/{BAD}"]["checks"]
    text = [c for c in checks if "picture text at least" in c["name"]]
    assert len(text) == 1 and text[0]["ok"] is False
    assert "'tiny words' is 5.6 px on screen" in text[0]["detail"]
    assert "'a label cut by the axes'" in text[0]["detail"]
    assert "readable" not in text[0]["detail"]  # the good figure passes
    assert failures(checks) == [f"{text[0]['name']}: {text[0]['detail']}"]
    assert result.returncode == 1  # so the whole run fails when one figure does
    glyphs = next(c for c in checks if "no tofu" in c["name"])
    assert glyphs["ok"] and "distinct non-ASCII character(s)" in glyphs["detail"]


def test_the_site_index_and_one_page(browser_run):
    data, _ = browser_run
    checks = data["notebooks"]["site"]["checks"]
    assert failures(checks) == []
    names = " | ".join(c["name"] for c in checks)
    assert "index: every link opens" in names
    assert "02_radians_and_relative_position.html: the animation plays in the static page" in names
    if CHINESE:  # the Chinese edition of the site: its index and first page have every glyph
        assert "zh/index.html: every character has a glyph (no tofu boxes)" in names
        assert f"zh/{CHINESE[0].stem}.html: every character has a glyph (no tofu boxes)" in names
