"""``python -m lessons.site OUT``: the course as a static HTML site, for reading before installing.

It writes ``OUT/index.html`` (the lessons in order, each with its title) and one page per
notebook of ``notebooks/`` (``OUT/NN_name.html``), with the pictures of each page in
``OUT/NN_name_files/``; and the same for the Chinese edition (``notebooks/zh/``) in
``OUT/zh/``. Every page of one language links to its twin in the other (same file name), the
index to the other index. The pages come from the committed, executed notebooks as they are:
nothing is run again. Each page shows the prose with its math, the code and its outputs
(figures, the claims table), and links to the previous lesson, the index and the next one.

The pages are made by nbconvert's ``HTMLExporter`` with its ``lab`` template (the look of
JupyterLab), extended by a small template in this module for the navigation. Math is
typeset in the browser by MathJax, which the template loads from a CDN. The animation of
``02`` is HTML and JavaScript in the notebook's output and plays in the page. Sliders
(ipywidgets) need a running Python kernel, which a static page does not have: their
place says so, and shows the widget's still picture where its output holds one.

Needs the ``site`` extra: ``pip install -e ".[site]"``. To publish on GitHub Pages, build
into a folder and publish that folder (see the README).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SLIDER_NOTE = (
    "Sliders appear here in a live notebook: they need a running Python kernel, which this page "
    "does not have. Open the notebook in JupyterLab and run the cell to use them."
)
# The Chinese edition: notebooks/zh/ (same file names) -> OUT/zh/.
ZH = "zh"

# The lab template with the lessons' navigation above and below the notebook.
PAGE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{% block extra_css %}
<style type="text/css">
nav.lessons-nav { display: flex; justify-content: space-between; gap: 1em; max-width: 1100px;
  margin: 0.8em auto; padding: 0.4em 1em; font-family: sans-serif; font-size: 15px;
  border-top: 1px solid #ddd; border-bottom: 1px solid #ddd; }
nav.lessons-nav a { text-decoration: none; }
.lessons-slider-note { border-left: 4px solid #d97706; background: #fffbeb; padding: 0.5em 0.8em; }
</style>
{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
{{ resources.lessons_nav }}
{%- endblock body_header -%}
{% block body_footer %}
{{ resources.lessons_nav }}
{{ super() }}
{% endblock body_footer %}
"""

INDEX_TEMPLATE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; max-width: 760px; margin: 2em auto; padding: 0 1em; line-height: 1.5;
  font-size: 16px; color: #1f2937; }}
ol li {{ margin: 0.5em 0; }}
.note {{ color: #4b5563; }}
</style>
</head>
<body>
<p class="note">{switch}</p>
<h1>{title}</h1>
<p>{intro}</p>
<ol>
{items}
</ol>
<p class="note">{note}</p>
</body>
</html>
"""

INTRO = (
    "Rotary position embedding (RoPE), one lesson in notebooks: read them here in order, as "
    "they were last run. Each page ends with a table of the numbers the lesson states and the "
    "values the code computes."
)
NOTE = (
    "These pages are a snapshot. To run the code, move the sliders and do the exercises, open "
    "the notebooks in JupyterLab (see the repository's README)."
)

# What a page says, per language ("en": the course; "zh": its Chinese edition in OUT/zh/).
WORDS = {
    "en": {"lang": "en", "title": "RoPE, lesson 13", "intro": INTRO, "note": NOTE, "slider": SLIDER_NOTE,
           "all": "all lessons", "switch": "中文", "switch_lang": "zh-CN",
           "still": "the picture before any slider moves"},
    ZH: {"lang": "zh-CN", "title": "RoPE：《手写一个小模型》第 13 课",
         "intro": "旋转位置编码（RoPE），一课，分成若干笔记本：按顺序在这里阅读，"
                  "内容是它们最后一次运行时的样子。每页最后有一张表，列出这一课写出的数字和代码算出的值。",
         "note": "这些页面是快照。要运行代码、拖动滑块、做练习，请在 JupyterLab 里打开笔记本"
                 "（见仓库的 README.zh-CN.md）。",
         "slider": "在运行中的笔记本里，这里会显示滑块：滑块需要一个运行中的 Python 内核，而这个页面没有。"
                   "请在 JupyterLab 里打开笔记本并运行这个单元。",
         "all": "全部课程", "switch": "English", "switch_lang": "en",
         "still": "滑块移动之前的图"},
}


def notebook_paths(directory: Path = NOTEBOOKS) -> list[Path]:
    """The notebooks of the course in lesson order (their names start with the number)."""
    paths = sorted(Path(directory).glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebooks (NN_name.ipynb) in {directory}")
    return paths


def title_of(nb, fallback: str) -> str:
    """The notebook's first heading as plain text: without its '#' marks and without the
    backticks of its code spans (a link text and a page title show no markdown), or ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("#"):
                return re.sub(r"`([^`]*)`", r"\1", line.lstrip("#").strip())
    return fallback


def _slider_preprocessor():
    from nbconvert.preprocessors import Preprocessor

    class SliderStill(Preprocessor):
        """Replace each widget view (it needs a kernel) by a note and the still picture, if any."""

        def preprocess_cell(self, cell, resources, index):
            words = WORDS[resources.get("lessons_language", "en")]
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if WIDGET_VIEW not in data:
                    continue
                parts = [f'<p class="lessons-slider-note">{html.escape(words["slider"])}</p>']
                for mime in ("image/png", "image/jpeg"):
                    if mime in data:
                        still = f"data:{mime};base64,{data[mime]}"
                        parts.append(f'<img src="{still}" alt="{html.escape(words["still"])}">')
                if "text/plain" in data:
                    parts.append(f"<pre>{html.escape(str(data['text/plain']))}</pre>")
                output["data"] = {"text/html": "\n".join(parts), "text/plain": data.get("text/plain", "")}
            return cell, resources

    return SliderStill


def _exporter():
    try:
        import jinja2
        from nbconvert import HTMLExporter
        from nbconvert.preprocessors import ExtractOutputPreprocessor
    except ImportError as error:
        raise SystemExit(
            f"python -m lessons.site needs nbconvert ({error}); install the site extra: "
            'pip install -e ".[site]"'
        ) from None
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"lessons_page.html.j2": PAGE_TEMPLATE})],
        template_file="lessons_page.html.j2",
    )
    exporter.register_preprocessor(_slider_preprocessor(), enabled=True)
    exporter.register_preprocessor(ExtractOutputPreprocessor, enabled=True)
    return exporter


def _switch(href: str | None, language: str) -> str:
    """The link to the same page in the other language (nothing when there is no twin)."""
    if href is None:
        return ""
    words = WORDS[language]
    return (f'<a class="lessons-language" href="{href}" hreflang="{words["switch_lang"]}" '
            f'lang="{words["switch_lang"]}">{words["switch"]}</a>')


def _nav(pages: list[tuple[str, str]], i: int, language: str = "en", twin: str | None = None) -> str:
    """Links to the previous lesson, the index (and the twin page in the other language) and the
    next lesson."""
    words = WORDS[language]
    middle = f'<a href="index.html">{html.escape(words["all"])}</a>'
    if twin is not None:
        middle = f"<span>{middle} &middot; {_switch(twin, language)}</span>"
    parts = ["<span></span>", middle, "<span></span>"]
    if i > 0:
        name, title = pages[i - 1]
        parts[0] = f'<a href="{name}" rel="prev">&larr; {html.escape(title)}</a>'
    if i + 1 < len(pages):
        name, title = pages[i + 1]
        parts[2] = f'<a href="{name}" rel="next">{html.escape(title)} &rarr;</a>'
    return '<nav class="lessons-nav">' + "".join(parts) + "</nav>"


def _edition(out: Path, paths: list[Path], exporter, language: str, twins: dict[str, str]) -> list[Path]:
    """One language's pages and index in ``out``; ``twins``: page name -> its twin's href."""
    import nbformat

    out.mkdir(parents=True, exist_ok=True)
    words = WORDS[language]
    exporter.language_code = words["lang"].split("-")[0]  # <html lang="...">: ISO 639-1 only
    books = [nbformat.read(p, as_version=4) for p in paths]
    pages = [(f"{p.stem}.html", title_of(nb, p.stem)) for p, nb in zip(paths, books, strict=True)]
    written = []
    for i, (path, nb) in enumerate(zip(paths, books, strict=True)):
        resources = {
            "metadata": {"name": pages[i][1], "path": str(path.parent)},
            "output_files_dir": f"{path.stem}_files",
            "unique_key": path.stem,
            "lessons_nav": _nav(pages, i, language, twins.get(pages[i][0])),
            "lessons_language": language,
        }
        body, resources = exporter.from_notebook_node(nb, resources=resources)
        for name, data in resources.get("outputs", {}).items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        page = out / pages[i][0]
        page.write_text(body, encoding="utf-8")
        written.append(page)
    items = "\n".join(
        f'<li><a href="{name}">{html.escape(title)}</a> <span class="note">({name[:2]})</span></li>'
        for name, title in pages
    )
    index = out / "index.html"
    text = INDEX_TEMPLATE.format(
        lang=words["lang"], title=html.escape(words["title"]), intro=html.escape(words["intro"]), items=items,
        note=html.escape(words["note"]), switch=_switch(twins.get("index.html"), language),
    )
    index.write_text(text, encoding="utf-8")
    return [index, *written]


def build(out: Path, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Write the site into ``out`` (created if needed); return the pages written, index first:
    the English pages, then the Chinese edition's (``notebooks/zh`` -> ``out/zh``) if it exists."""
    out = Path(out)
    paths = notebook_paths(notebooks)
    zh_dir = Path(notebooks) / ZH
    zh_paths = sorted(zh_dir.glob("[0-9][0-9]_*.ipynb")) if zh_dir.is_dir() else []
    exporter = _exporter()
    names = {p.name for p in zh_paths}
    to_zh = {f"{p.stem}.html": f"{ZH}/{p.stem}.html" for p in paths if p.name in names}
    if zh_paths:
        to_zh["index.html"] = f"{ZH}/index.html"
    written = _edition(out, paths, exporter, "en", to_zh)
    if zh_paths:
        english = {p.name for p in paths}
        to_en = {f"{p.stem}.html": f"../{p.stem}.html" for p in zh_paths if p.name in english}
        to_en["index.html"] = "../index.html"
        written += _edition(out / ZH, zh_paths, exporter, ZH, to_en)
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve the files as they are
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lessons.site",
        description="Build the course as a static HTML site (index.html and one page per notebook) "
        "from the committed, executed notebooks; nothing is run again.",
    )
    parser.add_argument("out", type=Path, help="directory to write the site into (created if needed)")
    parser.add_argument(
        "--notebooks", type=Path, default=NOTEBOOKS, help="directory of the notebooks (default: the course's)"
    )
    args = parser.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"out: expected a directory, got the file {str(args.out)!r}")
    if not args.notebooks.is_dir():
        parser.error(f"--notebooks: expected a directory of notebooks, got {str(args.notebooks)!r}")
    start = time.perf_counter()
    pages = build(args.out, args.notebooks)
    print(f"wrote {len(pages)} pages into {args.out} in {time.perf_counter() - start:.1f} s; open {pages[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
