"""``python -m lessons.site OUT``: every page is there, every picture it references exists,
no internal link is broken, the animation of 02 is in its page; nothing is run again. The
Chinese edition (``notebooks/zh`` -> ``OUT/zh``) likewise, and every page links to its twin in
the other language."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ZH_NOTEBOOKS = sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))

if os.environ.get("CI", "").lower() != "true":
    pytest.importorskip("nbconvert", reason="the site needs the site extra: pip install -e '.[site]'")

from lessons import site  # noqa: E402


class Page(HTMLParser):
    """The links, pictures and element ids of one HTML page, its language and language switches."""

    def __init__(self, text: str):
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()
        self.switches: list[str] = []  # href of each <a class="lessons-language">
        self.lang: str | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag == "a" and "lessons-language" in (attrs.get("class") or "").split():
            self.switches.append(attrs.get("href"))
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href") is not None:
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src") is not None:
            self.images.append(attrs["src"])


def local(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    pages = site.build(out, ROOT / "notebooks")
    return out, pages


@pytest.fixture(scope="module")
def parsed(built):
    out, _ = built
    return {p.name: Page(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.html"))}


@pytest.fixture(scope="module")
def parsed_all(built):
    """Every page of both editions, by its path in the site (``zh/01_....html``)."""
    out, _ = built
    pages = sorted(out.rglob("*.html"))
    return {p.relative_to(out).as_posix(): Page(p.read_text(encoding="utf-8")) for p in pages}


def test_index_and_one_page_per_notebook(built):
    out, pages = built
    assert pages[0] == out / "index.html"
    english = [f"{nb.stem}.html" for nb in NOTEBOOKS]
    assert [p.name for p in pages[1:len(NOTEBOOKS) + 1]] == english
    assert all(p.is_file() and p.stat().st_size > 1000 for p in pages)


def test_index_links_every_page_in_lesson_order(parsed):
    index = parsed["index.html"]
    links = [link for link in index.links if local(link) and link not in index.switches]
    assert links == [f"{nb.stem}.html" for nb in NOTEBOOKS]


def test_every_referenced_picture_exists(built, parsed):
    out, _ = built
    missing, files = [], 0
    for name, page in parsed.items():
        for src in page.images:
            if src.startswith("data:image/"):
                continue
            assert local(src), f"{name}: a picture from outside the site: {src}"
            files += 1
            if not (out / unquote(urlsplit(src).path)).is_file():
                missing.append(f"{name}: {src}")
    assert missing == []
    stored = sum(
        "image/png" in o.get("data", {})
        for nb in NOTEBOOKS
        for c in nbformat.read(nb, as_version=4).cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert files == stored  # every figure of every notebook is a file of the site


def test_no_internal_link_is_broken(built, parsed):
    out, _ = built
    broken, checked = [], 0

    def ids(target):  # a browser looks for the fragment as written, then decoded
        return parsed[target].ids if target in parsed else set()

    for name, page in parsed.items():
        for href in page.links:
            if not local(href) or href.startswith("mailto:"):
                continue
            parts = urlsplit(href)
            target = unquote(parts.path) or name
            checked += 1
            if not (out / target).is_file():
                broken.append(f"{name}: {href} (no file)")
            elif parts.fragment and not {parts.fragment, unquote(parts.fragment)} & ids(target):
                broken.append(f"{name}: {href} (no element with that id)")
    assert broken == []
    assert checked > 3 * len(NOTEBOOKS)


def test_navigation_between_lessons(parsed):
    names = [f"{nb.stem}.html" for nb in NOTEBOOKS]
    for i, name in enumerate(names):
        links = parsed[name].links
        assert "index.html" in links
        if i > 0:
            assert names[i - 1] in links, name
        if i + 1 < len(names):
            assert names[i + 1] in links, name


def test_02_page_holds_the_playable_animation(built):
    out, _ = built
    page = (out / "02_radians_and_relative_position.html").read_text(encoding="utf-8")
    assert 'class="animation' in page
    # The player (frames and the play button) is in the page, as the notebook's output holds it.
    assert re.search(r"frames\[\d+\] = \\\\?\"data:image/png;base64,", page)
    assert "Play" in page


def test_sliders_say_they_need_a_kernel(built):
    out, _ = built
    for nb in NOTEBOOKS:
        cells = nbformat.read(nb, as_version=4).cells
        widgets = sum(
            site.WIDGET_VIEW in o.get("data", {}) for c in cells if c.cell_type == "code" for o in c.outputs
        )
        page = (out / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert page.count('<p class="lessons-slider-note">') == widgets, nb.name
        assert site.WIDGET_VIEW not in page


def test_claims_tables_are_in_the_pages(built):
    out, _ = built
    for nb in NOTEBOOKS:
        source = "\n".join(c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code")
        page = (out / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert ('class="lessons-claims"' in page) == bool(re.search(r"\bshow\(", source)), nb.name


def test_nothing_is_run_again(tmp_path):
    """The page shows the stored output, not what running the code would give."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A lesson\n\nThe angle is $\\theta$.", id="prose"),
        nbformat.v4.new_code_cell('print("fresh" + "ly run")', id="code", execution_count=1, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="the stored output\n")]),
    ]  # fmt: skip
    nbformat.write(nb, notebooks / "01_only.ipynb")
    pages = site.build(tmp_path / "out", notebooks)
    page = pages[1].read_text(encoding="utf-8")
    assert "the stored output" in page and "freshly run" not in page
    assert "$\\theta$" in page or "\\theta" in page  # the math is left for MathJax to typeset
    assert "A lesson" in pages[0].read_text(encoding="utf-8")


def test_bad_arguments_are_named(tmp_path, capsys):
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        site.main([str(tmp_path / "a_file")])
    assert exit_info.value.code == 2
    assert "out: expected a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        site.main([str(tmp_path / "out"), "--notebooks", str(tmp_path / "nowhere")])
    assert "--notebooks: expected a directory" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="no notebooks"):
        site.build(tmp_path / "out", tmp_path)


def test_site_is_plain_files_for_github_pages(built):
    out, _ = built
    assert (out / ".nojekyll").is_file()
    json.dumps([p.name for p in out.iterdir()])  # names only, nothing outside OUT
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))


# ------------------------------------------------------------------ the Chinese edition in OUT/zh


def test_chinese_edition_index_and_one_page_per_notebook(built, parsed_all):
    out, pages = built
    assert ZH_NOTEBOOKS, "no notebooks/zh/NN_*.ipynb: generate them (python -m lessons.i18n build)"
    assert [nb.name for nb in ZH_NOTEBOOKS] == [nb.name for nb in NOTEBOOKS]  # the same files
    zh = [p.relative_to(out).as_posix() for p in pages[len(NOTEBOOKS) + 1:]]
    assert zh == ["zh/index.html", *[f"zh/{nb.stem}.html" for nb in ZH_NOTEBOOKS]]
    index = parsed_all["zh/index.html"]
    listed = [link for link in index.links if link not in index.switches]
    assert listed == [f"{nb.stem}.html" for nb in ZH_NOTEBOOKS]
    assert index.lang == "zh-CN" and parsed_all["index.html"].lang == "en"
    assert {parsed_all[f"zh/{nb.stem}.html"].lang for nb in ZH_NOTEBOOKS} == {"zh"}
    text = (out / "zh" / "index.html").read_text(encoding="utf-8")
    assert f"<h1>{site.WORDS['zh']['title']}</h1>" in text and site.INTRO not in text


def test_every_page_links_to_its_twin_in_the_other_language(built, parsed_all):
    """The language switch of every page resolves to a page whose own switch leads back."""
    out, _ = built
    checked = 0
    for name, page in parsed_all.items():
        assert len(set(page.switches)) == 1, f"{name}: language switches {page.switches}"
        target = (out / name).parent / page.switches[0]
        assert target.is_file(), f"{name}: the switch {page.switches[0]} leads to no page"
        twin = target.resolve().relative_to(out.resolve()).as_posix()
        assert Path(twin).name == Path(name).name and twin != name  # the same page, other language
        back = (out / twin).parent / parsed_all[twin].switches[0]
        assert back.resolve() == (out / name).resolve(), f"{twin} does not switch back to {name}"
        checked += 1
    assert checked == 2 * (len(NOTEBOOKS) + 1)


def test_chinese_pages_pictures_links_and_slider_notes(built, parsed_all):
    out, _ = built
    broken = []
    for name, page in parsed_all.items():
        if not name.startswith("zh/"):
            continue
        folder = (out / name).parent
        for src in page.images:
            if not src.startswith("data:image/") and not (folder / unquote(urlsplit(src).path)).is_file():
                broken.append(f"{name}: picture {src}")
        for href in page.links:
            parts = urlsplit(href)
            if local(href) and parts.path and not (folder / unquote(parts.path)).is_file():
                broken.append(f"{name}: link {href}")
    assert broken == []
    for nb in ZH_NOTEBOOKS:
        cells = nbformat.read(nb, as_version=4).cells
        outputs = [o for c in cells if c.cell_type == "code" for o in c.outputs]
        widgets = sum(site.WIDGET_VIEW in o.get("data", {}) for o in outputs)
        page = (out / "zh" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert page.count('<p class="lessons-slider-note">') == widgets, nb.name
        assert page.count(site.WORDS["zh"]["slider"]) == widgets and site.SLIDER_NOTE not in page


def test_a_title_shows_no_markdown_backticks():
    import nbformat

    from lessons.site import title_of

    heading = nbformat.v4.new_markdown_cell("# 04 — The code: `apply_rope` on `[B, H, T, d]`")
    nb = nbformat.v4.new_notebook(cells=[heading])
    assert title_of(nb, "fallback") == "04 — The code: apply_rope on [B, H, T, d]"
    assert title_of(nbformat.v4.new_notebook(), "fallback") == "fallback"
