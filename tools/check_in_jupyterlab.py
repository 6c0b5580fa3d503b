"""Open the course notebooks in JupyterLab in a real headless browser and check what a learner sees.

For each notebook given on the command line the script:

1. opens it as a learner who has just cloned the repository (the notebook is UNTRUSTED, nothing
   has run) and checks that every image stored in the file shows, that widget outputs fall back
   to their text line (not "Error displaying widget") and that a stored animation shows no
   buttons or slider while its script cannot run;
2. runs "Kernel > Restart Kernel and Run All Cells..." from the menu, waits until every code
   cell has run, and checks that each image output shows, that no cell has an error output
   (except cells tagged ``raises-exception``) and that no widget reports an error;
3. if the notebook holds a matplotlib jshtml animation: clicks "Next frame" (up to 5 times, as
   a story may hold a picture for a frame or two) and "Play", and checks that the displayed
   picture changes;
4. for every ipywidget with sliders and a picture: moves each slider one step and checks that
   the picture (and the text line) change; for ``PositionExplorer`` (``02``) moving the second
   slider by the same step brings the text back to where it started (same distance, same dot);
5. measures the text of every picture shown after the run (figures, the animation's frames,
   slider pictures): the kernels it starts record, in each PNG that matplotlib writes, every
   text as drawn (size, place; see ``lessons.figures.style.record_text_in_png``). A picture
   fails when a text is shown smaller than ``MIN_TEXT_PX`` screen pixels (its size at the
   figure's dpi times how much the page shrinks the picture) or is clipped (crosses the edge
   of the picture, or is cut by its axes);
6. checks the claims table that ends the notebook: an HTML table, one row per claim, every
   claim holding, and no number broken across two lines.
7. checks that every character shown has a glyph (no "tofu" box): each non-ASCII character of
   the notebook's text (prose, outputs, the claims table; not the math, which MathJax draws with
   its own fonts) is drawn on a canvas in the font of the element that holds it and compared
   with the drawing of two codepoints no font has (U+F0000, U+F0001, private use): a character
   drawn exactly like them has no glyph. For a notebook of the Chinese edition (its metadata
   ``lessons.language``), also that ``fc-list :lang=zh`` names a font (Debian:
   ``apt-get install fonts-noto-cjk``).

With ``--site DIR`` it also opens the static site built by ``python -m lessons.site DIR``:
the index, every link on it, and one notebook page (its images, and its animation plays).
MathJax comes from a CDN there, which the check blocks: the page's math stays as TeX in its
screenshots.

It prints one line per check (``PASS`` / ``FAIL``), the time each notebook took, and exits
with status 1 if any check failed. Screenshots (PNG) of the key moments are written to the
directory given by ``--screenshots`` (default: a new temporary directory, printed at the end).

The notebooks are run in a temporary copy of the repository, so the committed files are never
modified. JupyterLab runs on 127.0.0.1 with a random token, its own settings (notebook
``windowingMode`` set to ``none`` so every cell is rendered, news and update checks off) and
an empty trust database, so every notebook opens untrusted. Requests that leave 127.0.0.1
(e.g. the font-awesome stylesheet that jshtml animations link to) are blocked, as on an
offline machine.

Prerequisites (the ``browser`` extra and a system package, not the course's dependencies):

- Chromium from the distribution: ``apt-get install chromium`` (``/usr/bin/chromium``), or
  pass another Chromium with ``--chromium``.
- Playwright for Python from PyPI, in the environment that runs this script (the same one
  that has jupyterlab, ipykernel, ipywidgets and the ``lessons`` package):
  ``pip install -e ".[browser]"``. Do NOT run ``playwright install``: the script drives the
  system Chromium instead of a downloaded one.

The Chinese edition's notebooks (``notebooks/zh``, ``solutions/zh``) are checked like the
English ones; their figures keep English text (the same package code draws them). With
``--light-translations`` a translated notebook whose English twin is checked in the same run is
only opened untrusted and checked as stored (step 1, its claims table, its fonts and glyphs,
one screenshot): its code cells are its twin's, and nbval runs it. The static site's
translated edition (``--site``: ``DIR/zh/``) gets the glyph check on its index and first page.

Usage (from the repository root)::

    python tools/check_in_jupyterlab.py notebooks/02_radians_and_relative_position.ipynb
    python tools/check_in_jupyterlab.py notebooks/0[1-5]*.ipynb --screenshots shots/
    python tools/check_in_jupyterlab.py notebooks/*.ipynb --site _site --json-report checks.json

A notebook outside the repository is copied into the checked copy (``outside/``) and run
there with the ``lessons`` package importable. ``tests/test_browser.py`` runs this script
over every notebook of the course (``pip install -e ".[browser]"``).
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STYLE_MODULE = REPO / "lessons" / "figures" / "style.py"


@functools.cache
def house_style():
    """``lessons/figures/style.py`` loaded on its own (importing ``lessons.figures`` would set rcParams)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lessons_figure_style", STYLE_MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


# Run by every kernel of the checked JupyterLab (an IPython startup file): PNGs that matplotlib
# writes carry the text report. Loaded from the file, so the notebook's rcParams stay its own.
KERNEL_STARTUP = """\
import importlib.util as _u
import sys as _sys

_spec = _u.spec_from_file_location("lessons_figure_style", {path!r})
_style = _u.module_from_spec(_spec)
_sys.modules[_spec.name] = _style
_spec.loader.exec_module(_style)
_style.record_text_in_png()
del _u, _sys, _spec, _style
"""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# User settings for the temporary JupyterLab: render every cell, no news or update toasts.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

MAX_STEPS = 5  # "Next frame" clicks allowed before the animation's picture must change

MAX_UPSCALE = 1.5  # a widget picture stretched more than this looks blurred

SMALL_SCALE = 0.75  # an output image shrunk below this is reported (INFO): its small text gets hard to read

COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "venv", ".hypothesis", "_site", "__pycache__", "*.egg-info", ".ipynb_checkpoints",
    ".pytest_cache", ".ruff_cache", "build", "dist",
)

# JavaScript run in the page --------------------------------------------------------------

JS_IMAGES = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img'))
    .filter(img => !img.closest('.animation') && !img.closest('.jupyter-widgets'))
    .map(img => ({shown: img.complete && img.naturalWidth > 0, width: img.naturalWidth,
                  height: img.naturalHeight, shownWidth: Math.round(img.getBoundingClientRect().width)}))"""

JS_CELLS = """() => ({
    cells: document.querySelectorAll('.jp-Notebook .jp-Cell').length,
    rendered: Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'))
        .filter(c => c.querySelector('.jp-InputArea')).length})"""

JS_KERNEL_IDLE = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    return !!(panel && panel.sessionContext && panel.sessionContext.session
              && panel.sessionContext.kernelDisplayStatus === 'idle');
}"""

JS_TRUSTED = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    return Array.from(panel.content.model.cells).filter(c => c.type === 'code').map(c => c.trusted);
}"""

JS_ERRORS = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell'))
    .map((cell, index) => ({index,
        errors: Array.from(cell.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
            .map(o => o.textContent.slice(0, 300)),
        widgetErrors: Array.from(cell.querySelectorAll('.jp-OutputArea-output'))
            .filter(o => o.textContent.includes('Error displaying widget'))
            .map(o => o.textContent.slice(0, 200))}))"""

JS_ANIMATION = """(root) => {
    const img = root.querySelector('.animation img');
    const slider = root.querySelector('.animation input[type=range]');
    return {src: img ? (img.getAttribute('src') || '') : null,
            shown: img ? (img.complete && img.naturalWidth > 0) : false,
            frame: slider ? slider.value : null};
}"""

JS_WIDGET = """(root) => {
    const img = root.querySelector('.jupyter-widgets img');
    const labels = Array.from(root.querySelectorAll('.widget-label, .widget-label-basic'))
        .filter(l => !l.closest('.widget-slider')).map(l => l.textContent.trim()).filter(t => t);
    const readouts = Array.from(root.querySelectorAll('.widget-readout')).map(r => r.textContent.trim());
    const box = root.getBoundingClientRect();
    return {src: img ? (img.getAttribute('src') || '') : null,
            shown: img ? (img.complete && img.naturalWidth > 0) : false,
            natural: img ? [img.naturalWidth, img.naturalHeight] : null,
            displayed: img ? [Math.round(img.getBoundingClientRect().width),
                              Math.round(img.getBoundingClientRect().height)] : null,
            boxHeight: Math.round(box.height), viewHeight: window.innerHeight,
            text: labels.join(' | '), readouts};
}"""


# Every picture in the outputs: where it is, its natural and shown width, its bytes (base64).
JS_PICTURES = """async (root) => {
    const scope = root || document;
    const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell'));
    const imgs = Array.from(scope.querySelectorAll('.jp-OutputArea-output img'));
    const found = [];
    for (const img of imgs) {
        const kind = img.closest('.animation') ? 'animation'
            : (img.closest('.jupyter-widgets') ? 'slider picture' : 'figure');
        let data = null;
        try {
            const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
            let text = '';
            for (let k = 0; k < bytes.length; k += 0x8000) {
                text += String.fromCharCode.apply(null, bytes.subarray(k, k + 0x8000));
            }
            data = btoa(text);
        } catch (e) { data = null; }
        found.push({kind, cell: cells.indexOf(img.closest('.jp-CodeCell')),
                    natural: img.naturalWidth, shown: img.getBoundingClientRect().width, data});
    }
    return found;
}"""

# The claims tables (lessons.claims.show): rows, failures, numbers broken across lines.
JS_CLAIMS = """() => Array.from(document.querySelectorAll('.jp-Notebook table.lessons-claims')).map(t => ({
    rows: t.querySelectorAll('tbody tr').length,
    failing: Array.from(t.querySelectorAll('tbody tr'))
        .filter(r => r.cells[0].textContent.trim() !== 'ok').length,
    broken: Array.from(t.querySelectorAll('td span')).filter(s => s.getClientRects().length > 1)
        .map(s => s.textContent),
    columns: Array.from(t.querySelectorAll('tbody tr')).filter(r => r.cells.length !== 4).length}))"""


# Characters without a glyph: each non-ASCII character of the notebook's visible text, drawn in
# the font of its element, against two codepoints that no font has (both drawn the same: the
# font's "tofu"). Math is left out: MathJax draws it with its own web fonts.
NOTEBOOK_SELECTOR = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
JS_GLYPHS = r"""(selector) => {
    const root = document.querySelector(selector);
    if (!root) return {fonts: 0, checked: 0, missing: [], unsure: []};
    const cells = Array.from(root.querySelectorAll('.jp-Cell'));  // (none in a static page)
    const skip = 'mjx-container, mjx-assistive-mml, .MathJax, .MathJax_Preview, script, style';
    const byFont = new Map();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!el || el.closest(skip) || !/[^\x00-\x7f]/.test(node.data)) continue;
        if (!el.getClientRects().length) continue;  // not shown
        const cs = getComputedStyle(el);
        const font = `${cs.fontStyle} ${cs.fontWeight} 32px ${cs.fontFamily}`;
        const cell = el.closest('.jp-Cell');
        const where = cell ? `cell ${cells.indexOf(cell)}` : 'page';
        if (!byFont.has(font)) byFont.set(font, new Map());
        const chars = byFont.get(font);
        for (const c of node.data) {
            if (c.codePointAt(0) < 0x80 || /[\p{White_Space}\p{Cf}\p{Cc}]/u.test(c)) continue;
            if (!chars.has(c)) chars.set(c, where);
        }
    }
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const draw = (font, c) => {
        ctx.clearRect(0, 0, 48, 48);
        ctx.font = font;
        ctx.fillStyle = '#000';
        ctx.textBaseline = 'top';
        ctx.fillText(c, 4, 4);
        const d = ctx.getImageData(0, 0, 48, 48).data;
        let bits = '';
        for (let i = 3; i < d.length; i += 4) bits += d[i] > 0 ? '1' : '0';
        return bits;
    };
    const missing = [], unsure = [];
    let checked = 0;
    for (const [font, chars] of byFont) {
        const tofu = draw(font, '\u{F0000}');
        if (tofu !== draw(font, '\u{F0001}')) { unsure.push(font); continue; }
        for (const [c, where] of chars) {
            checked += 1;
            if (draw(font, c) === tofu) {
                const code = 'U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
                missing.push({char: c, code, where, font: font.replace(' 32px', '')});
            }
        }
    }
    return {fonts: byFont.size, checked, missing, unsure};
}"""


# Results -------------------------------------------------------------------------------


@dataclass
class Report:
    """Collects PASS/FAIL lines (and, for ``--json-report``, the same per notebook)."""

    failures: int = 0
    lines: list[str] = field(default_factory=list)
    checks: dict[str, list[dict]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def check(self, notebook: str, name: str, ok: bool, detail: str = "") -> bool:
        status = "PASS" if ok else "FAIL"
        line = f"{status}  {notebook}: {name}" + (f" ({detail})" if detail else "")
        print(line, flush=True)
        self.lines.append(line)
        self.checks.setdefault(notebook, []).append({"name": name, "ok": bool(ok), "detail": detail})
        if not ok:
            self.failures += 1
        return ok

    def to_json(self) -> dict:
        return {"failures": self.failures, "notebooks": {
            nb: {"checks": checks, "seconds": round(self.seconds.get(nb, 0.0), 1)}
            for nb, checks in self.checks.items()}}


def stored_outputs(path: Path) -> dict:
    """Count what the committed notebook stores: images, animations, widgets, allowed errors."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]

    def html(o):
        text = o.get("data", {}).get("text/html", "")
        return "".join(text) if isinstance(text, list) else text

    return {
        "cells": len(cells),
        "code_cells": len(code),
        "images": sum("image/png" in o.get("data", {}) or "image/jpeg" in o.get("data", {}) for o in outputs),
        "animations": sum("_anim_img" in html(o) for o in outputs),
        "widgets": sum("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs),
        "raises": [
            i for i, c in enumerate(code) if "raises-exception" in c.get("metadata", {}).get("tags", [])
        ],
    }


def notebook_language(path: Path) -> str:
    """The notebook's metadata ``lessons.language`` (the Chinese edition's: ``zh_CN``), else ``en``."""
    meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    lessons = meta.get("lessons") if isinstance(meta, dict) else None
    return str(lessons.get("language") or "en") if isinstance(lessons, dict) else "en"


@functools.cache
def fonts_for(language: str) -> tuple[tuple[str, ...], str]:
    """The font families fontconfig has for ``language`` (``fc-list :lang=zh family``), and a
    problem when fc-list cannot be asked."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return (), "fc-list not found (fontconfig)"
    command = [fc_list, f":lang={language}", "family"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    families = tuple(sorted({line.split(",")[0].strip() for line in lines}))
    return families, "" if done.returncode == 0 else f"fc-list exited with {done.returncode}"


def check_fonts(report: Report, nb: str, language: str) -> None:
    """A notebook in Chinese needs a font for Chinese on this machine."""
    if not language.lower().startswith("zh"):
        return
    families, problem = fonts_for("zh")
    report.check(
        nb, "a font for Chinese is installed (fc-list :lang=zh)", bool(families),
        problem or (", ".join(families[:3]) if families else
                    "no font covers Chinese: apt-get install fonts-noto-cjk (Debian/Ubuntu)"),
    )  # fmt: skip


def check_glyphs(page, report: Report, nb: str, stage: str, selector: str = NOTEBOOK_SELECTOR) -> None:
    """Every non-ASCII character shown (not math) has a glyph in the font that shows it."""
    found = page.evaluate(JS_GLYPHS, selector)
    missing = found["missing"]
    listed = ", ".join(f"{m['char']!r} {m['code']} in {m['where']}" for m in missing[:8])
    if len(missing) > 8:
        listed += f", ... {len(missing) - 8} more"
    fonts = sorted({m["font"] for m in missing})
    if fonts:
        more = f"; {len(fonts) - 1} more font(s)" if len(fonts) > 1 else ""
        listed += f" (font: {fonts[0][:80]}{more})"
    unsure = "; cannot tell for font(s) " + ", ".join(found["unsure"][:3]) if found["unsure"] else ""
    report.check(
        nb, f"{stage}: every character has a glyph (no tofu boxes)", not missing and not found["unsure"],
        (f"no glyph for {listed}" if missing else
         f"{found['checked']} distinct non-ASCII character(s) in {found['fonts']} font(s) checked") + unsure,
    )  # fmt: skip


# JupyterLab server -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1, in a temporary copy of the repository."""

    def __init__(self, workdir: Path, timeout: float):
        self.workdir = workdir
        self.root = workdir / "repo"
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.timeout = timeout
        self.process: subprocess.Popen | None = None
        self.log = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, outside: list[Path] = ()) -> None:
        shutil.copytree(REPO, self.root, ignore=COPY_IGNORE)
        for path in outside:  # notebooks from outside the repository, e.g. a test's own
            (self.root / "outside").mkdir(exist_ok=True)
            shutil.copy2(path, self.root / "outside" / path.name)
        startup = self.workdir / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        style = self.root / "lessons" / "figures" / "style.py"
        startup_file = startup / "00-record-figure-text.py"
        startup_file.write_text(KERNEL_STARTUP.format(path=str(style)), encoding="utf-8")
        settings = self.workdir / "lab-user-settings"
        for name, values in LAB_SETTINGS.items():
            target = settings / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values), encoding="utf-8")
        env = dict(os.environ)
        env.update(
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(self.workdir / "lab-workspaces"),
            JUPYTER_RUNTIME_DIR=str(self.workdir / "runtime"),
            JUPYTER_DATA_DIR=str(self.workdir / "data"),  # empty trust database: notebooks open untrusted
            IPYTHONDIR=str(self.workdir / "ipython"),  # its startup file records figure text in PNGs
            PYTHONPATH=os.pathsep.join(filter(None, [str(self.root), env.get("PYTHONPATH", "")])),
        )
        command = [
            sys.executable, "-m", "jupyterlab",
            "--allow-root", "--no-browser",
            "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
        ]  # fmt: skip
        self.log = open(self.workdir / "jupyterlab.log", "w", encoding="utf-8")  # noqa: SIM115
        self.process = subprocess.Popen(
            command, cwd=self.root, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early; see {self.workdir / 'jupyterlab.log'}")
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer within {self.timeout:.0f} s")

    def api(self, method: str, path: str):
        request = urllib.request.Request(
            self.base + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log:
            self.log.close()


# Browser steps ---------------------------------------------------------------------------


def keep_local(route) -> None:
    url = route.request.url
    if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
        route.continue_()
    else:
        route.abort()


def wait_until(page, predicate_js: str, timeout_s: float, arg=None) -> bool:
    try:
        page.wait_for_function(predicate_js, arg=arg, timeout=timeout_s * 1000, polling=200)
        return True
    except Exception:  # playwright TimeoutError
        return False


def open_notebook(page, lab: Lab, relpath: str, timeout_s: float) -> bool:
    url = f"{lab.base}/lab/tree/{relpath}?reset&token={lab.token}"
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_s * 1000)
    opened = wait_until(
        page,
        "() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')",
        timeout_s,
    )
    # The kernel of a freshly opened notebook: wait until it is idle.
    wait_until(page, JS_KERNEL_IDLE, timeout_s)
    page.wait_for_timeout(1000)  # let the output renderers finish (images decode)
    return opened


def restart_and_run_all(page, timeout_s: float) -> bool:
    page.locator(".jp-NotebookPanel .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.get_by_role("menuitem", name="Kernel", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel and Run All Cells")).click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    # Done when every code cell shows an execution count and the kernel is idle again.
    # Done when every non-empty code cell has an execution count and the kernel is idle again.
    js = """() => {
        const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        if (!panel || !panel.content || !panel.content.model) return false;
        const cells = Array.from(panel.content.model.cells)
            .filter(c => c.type === 'code' && c.sharedModel.getSource().trim() !== '');
        return cells.length > 0 && cells.every(c => c.executionCount !== null && c.executionCount > 0)
            && panel.sessionContext.kernelDisplayStatus === 'idle';
    }"""
    page.wait_for_timeout(1500)  # the restart clears the prompts first
    done = wait_until(page, js, timeout_s)
    page.wait_for_timeout(1500)  # widget views and images render after the last reply
    return done


def shot(page, target, directory: Path, name: str) -> Path:
    path = directory / f"{name}.png"
    (target or page).screenshot(path=str(path))
    return path


def check_images(page, report: Report, nb: str, stage: str, expected: int) -> None:
    # Under load the outputs may still be rendering: give them up to 30 s to appear and decode.
    ready = f"() => {{ const i = ({JS_IMAGES})(); return i.length >= {expected} && i.every(x => x.shown); }}"
    wait_until(page, ready, 30.0)
    images = page.evaluate(JS_IMAGES)
    shown = sum(i["shown"] for i in images)
    report.check(
        nb, f"{stage}: images shown", shown == expected and len(images) == expected,
        f"{shown} of {len(images)} <img> outputs shown, {expected} image outputs expected",
    )  # fmt: skip
    for n, image in enumerate(images, start=1):
        if image["shown"] and image["shownWidth"] < SMALL_SCALE * image["width"]:
            print(
                f"INFO  {nb}: {stage}: image {n} is shrunk to fit: {image['width']} px wide shown at "
                f"{image['shownWidth']} px ({image['shownWidth'] / image['width']:.2f}x); "
                "small text may be hard to read"
            )


def check_errors(page, report: Report, nb: str, stage: str, raises: list[int]) -> None:
    cells = page.evaluate(JS_ERRORS)
    bad = [c for c in cells if c["errors"] and c["index"] not in raises]
    detail = "; ".join(f"code cell {c['index']}: {c['errors'][0][:120]!r}" for c in bad[:3])
    report.check(nb, f"{stage}: no error/stderr outputs", not bad, detail or f"{len(cells)} code cells")
    if raises and stage.startswith("after"):
        shown = [i for i in raises if i < len(cells) and cells[i]["errors"]]
        report.check(
            nb, f"{stage}: cells tagged raises-exception show their error", len(shown) == len(raises),
            f"code cells {raises}, with an error shown: {shown}",
        )  # fmt: skip
    widget_bad = [c for c in cells if c["widgetErrors"]]
    detail = "; ".join(f"code cell {c['index']}: {c['widgetErrors'][0]!r}" for c in widget_bad[:3])
    report.check(nb, f"{stage}: no widget errors", not widget_bad, detail)


def check_animation(page, report: Report, nb: str, shots: Path, stem: str) -> None:
    outputs = page.locator(".jp-OutputArea-output").filter(has=page.locator(".animation"))
    if not report.check(nb, "animation: player present", outputs.count() >= 1, f"{outputs.count()} found"):
        return
    out = outputs.first
    out.scroll_into_view_if_needed()
    before = out.evaluate(JS_ANIMATION)
    shot(page, out, shots, f"{stem}_3_animation_frame0")
    report.check(nb, "animation: first frame shown", before["shown"], f"frame {before['frame']}")
    # A story may hold a picture for a few frames: step until the picture changes.
    stepped, clicks = before, 0
    while clicks < MAX_STEPS and stepped["src"] == before["src"]:
        out.locator('button[title="Next frame"]').click()
        clicks += 1
        page.wait_for_timeout(300)
        stepped = out.evaluate(JS_ANIMATION)
    report.check(
        nb, "animation: 'Next frame' changes the picture",
        stepped["shown"] and stepped["src"] != before["src"],
        f"frame {before['frame']} -> {stepped['frame']}, picture changed after {clicks} click(s)",
    )  # fmt: skip
    out.locator('button[title="Play"]').click()
    page.wait_for_timeout(2500)
    played = out.evaluate(JS_ANIMATION)
    shot(page, out, shots, f"{stem}_4_animation_playing")
    check_picture_text(page, report, nb, "animation: a frame while playing", within=out)
    report.check(
        nb, "animation: 'Play' advances the frames",
        played["shown"] and played["src"] != stepped["src"] and played["frame"] != stepped["frame"],
        f"frame {stepped['frame']} -> {played['frame']} after 2.5 s",
    )  # fmt: skip
    out.locator('button[title="Pause"]').click()


def press_slider(widget, index: int, key: str) -> None:
    handle = widget.locator(".noUi-handle").nth(index)
    handle.focus()
    handle.press(key)


def wait_for_new_picture(page, box, before: dict) -> dict:
    now = before
    for _ in range(25):  # the kernel redraws; wait for the new picture
        page.wait_for_timeout(200)
        now = box.evaluate(JS_WIDGET)
        if now["src"] != before["src"]:
            break
    return now


def check_sliders(page, report: Report, nb: str, shots: Path, stem: str) -> None:
    """Every widget with sliders and a picture: each slider, moved one step, changes the picture."""
    boxes = page.locator(".jp-OutputArea-output").filter(has=page.locator(".jupyter-widgets .noUi-handle"))
    if not report.check(nb, "widgets: sliders present", boxes.count() >= 1, f"{boxes.count()} found"):
        return
    for k in range(boxes.count()):
        box, name = boxes.nth(k), f"widget {k + 1}"
        box.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        start = box.evaluate(JS_WIDGET)
        shot(page, box, shots, f"{stem}_5_{name.replace(' ', '')}_start")
        if start["src"] is None:
            print(f"INFO  {nb}: {name}: sliders without a picture; not moved")
            continue
        report.check(nb, f"widgets: {name}: picture shown", start["shown"], f"text {start['text']!r}")
        if start["shown"]:
            scale = start["displayed"][0] / start["natural"][0]
            report.check(
                nb, f"widgets: {name}: sliders, text and picture fit on one screen, picture not blown up",
                start["boxHeight"] <= start["viewHeight"] and scale <= MAX_UPSCALE,
                f"picture {start['natural'][0]}x{start['natural'][1]} px shown at "
                f"{start['displayed'][0]}x{start['displayed'][1]} ({scale:.1f}x); "
                f"widget {start['boxHeight']} px tall in a {start['viewHeight']} px window",
            )  # fmt: skip
        handles = box.locator(".noUi-handle").count()
        before = start
        for j in range(handles):
            press_slider(box, j, "ArrowRight")
            moved = wait_for_new_picture(page, box, before)
            shot(page, box, shots, f"{stem}_6_{name.replace(' ', '')}_slider{j + 1}_moved")
            text_changed = j > 0 or not start["text"] or moved["text"] != before["text"]
            report.check(
                nb, f"widgets: {name}: moving slider {j + 1} of {handles} changes the picture"
                + (" and the text" if j == 0 and start["text"] else ""),
                moved["shown"] and moved["src"] != before["src"] and text_changed,
                f"sliders {before['readouts']} -> {moved['readouts']}; "
                f"{before['text']!r} -> {moved['text']!r}",
            )  # fmt: skip
            before = moved
        if handles == 2 and "dot" in start["text"]:  # PositionExplorer: same step for Q and K
            same_dot = start["text"].split("dot")[-1] == before["text"].split("dot")[-1]
            report.check(
                nb, f"widgets: {name}: moving both sliders by the same step restores the dot", same_dot,
                f"sliders {before['readouts']}; {before['text']!r}",
            )  # fmt: skip
        check_picture_text(page, report, nb, f"widgets: {name} after its sliders moved", within=box)


def check_picture_text(page, report: Report, nb: str, stage: str, within=None) -> None:
    """Every picture of the page (or ``within`` one output): no text too small or clipped."""
    style = house_style()
    pictures = within.evaluate(JS_PICTURES) if within is not None else page.evaluate(JS_PICTURES, None)
    problems, measured, smallest = [], 0, None
    for picture in pictures:
        where = f"code cell {picture['cell']} {picture['kind']}"
        text = style.png_text_report(base64.b64decode(picture["data"])) if picture["data"] else None
        if text is None or not picture["natural"]:
            print(f"INFO  {nb}: {stage}: {where}: no text report in the picture (not drawn by matplotlib)")
            continue
        measured += 1
        scale = picture["shown"] / picture["natural"]
        if text.smallest is not None:
            px = text.smallest.pixels * scale
            smallest = px if smallest is None else min(smallest, px)
        problems += [f"{where}: {p}" for p in text.problems(scale, style.MIN_TEXT_PX)]
    detail = "; ".join(problems[:4]) + (f"; ... {len(problems) - 4} more" if len(problems) > 4 else "")
    if not problems:
        detail = f"{measured} picture(s) measured"
        if smallest is not None:
            detail += f", smallest text {smallest:.1f} px"
    report.check(
        nb, f"{stage}: picture text at least {style.MIN_TEXT_PX:g} px on screen and not clipped",
        not problems, detail,
    )  # fmt: skip


def claims_notebooks(path: Path) -> list[str]:
    """The notebook numbers whose claims tables the notebook shows (``show("NN")`` calls)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
               if c["cell_type"] == "code"]
    return [f"{int(n):02d}" for src in sources for n in re.findall(r"\bshow\(\s*[\"']?(\d+)", src)]


def check_claims_tables(page, report: Report, nb: str, expected: list[str]) -> None:
    if not expected:
        return
    from lessons.claims import all_claims

    tables = page.evaluate(JS_CLAIMS)
    rows = [len(all_claims(n)) for n in expected]
    report.check(
        nb, "claims table: an HTML table with one row per claim",
        [t["rows"] for t in tables] == rows and not any(t["columns"] for t in tables),
        f"{len(tables)} table(s), rows {[t['rows'] for t in tables]}, expected {rows}",
    )  # fmt: skip
    report.check(nb, "claims table: every claim holds", all(t["failing"] == 0 for t in tables),
                 f"failing rows {[t['failing'] for t in tables]}")
    broken = [b for t in tables for b in t["broken"]]
    report.check(nb, "claims table: no number broken across two lines", not broken, ", ".join(broken[:5]))


def label_of(path: Path) -> str:
    """Where the notebook is in the checked copy: its path in the repository, or outside/NAME."""
    path = path.resolve()
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else f"outside/{path.name}"


def check_notebook(browser, lab: Lab, path: Path, report: Report, shots: Path, timeout_s: float,
                   light: bool = False) -> float:
    """Open, run and check one notebook. ``light``: a translated edition's notebook whose English
    twin (the same code cells, so the same figures, animation and sliders) is checked in the same
    run: it is opened untrusted and checked as it is stored (cells, images, no errors, its claims
    table, a font for its language, every glyph; one screenshot), not run again here (nbval runs
    it, and its twin's run here covers the code)."""
    resolved = path.resolve()
    inside = resolved.is_relative_to(REPO)
    relpath = label_of(resolved)
    nb = relpath  # notebooks/06_exercises.ipynb and solutions/06_exercises.ipynb differ
    stem = path.stem[:2] if path.stem[:2].isdigit() else path.stem
    if inside:  # notebooks/06 -> 06, solutions/06 -> solutions_06, notebooks/zh/06 -> zh_06, ...
        folders = list(Path(relpath).parent.parts)
        if folders[:1] == ["notebooks"]:
            folders = folders[1:]
        stem = "_".join([*folders, stem])
    stored = stored_outputs(path)
    started = time.monotonic()
    page = browser.new_page()
    page.route("**/*", keep_local)
    console_errors: list[str] = []
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    try:
        # 1. Opened, not run: the notebook is untrusted.
        opened = open_notebook(page, lab, relpath, timeout_s)
        if not report.check(nb, "opens in JupyterLab", opened):
            shot(page, None, shots, f"{stem}_0_open_failed")
            return time.monotonic() - started
        wait_until(  # under load the last cells may take a moment to render
            page, f"() => ({JS_CELLS})().rendered >= {stored['cells']}", min(timeout_s, 30.0)
        )
        cells = page.evaluate(JS_CELLS)
        report.check(
            nb, "every cell rendered (windowingMode none)",
            cells["cells"] == stored["cells"] and cells["rendered"] == stored["cells"],
            f"{cells['rendered']} rendered of {stored['cells']}",
        )  # fmt: skip
        trusted = page.evaluate(JS_TRUSTED)
        report.check(
            nb, "opens untrusted, as for a learner who just cloned the repository", not any(trusted),
            f"{sum(trusted)} of {len(trusted)} code cells trusted",
        )  # fmt: skip
        shot(page, None, shots, f"{stem}_1_opened_untrusted")
        check_images(page, report, nb, "opened untrusted", stored["images"])
        check_errors(page, report, nb, "opened untrusted", stored["raises"])
        if stored["widgets"]:
            fallback = page.locator(".jp-OutputArea-output", has_text="from the top to use them")
            report.check(nb, "opened untrusted: widget shows its text fallback", fallback.count() >= 1)
        if stored["animations"]:
            anim = page.locator(".jp-OutputArea-output").filter(has=page.locator(".animation")).first
            if anim.count():
                anim.scroll_into_view_if_needed()
                state = anim.evaluate(JS_ANIMATION)
                shot(page, anim, shots, f"{stem}_1b_animation_untrusted")
                # Untrusted, the player's script does not run: no button may look as if it works.
                controls = anim.locator(".animation button, .animation input").count()
                report.check(
                    nb, "opened untrusted: the animation shows no controls that cannot work", controls == 0,
                    f"{controls} buttons/inputs shown; picture shown: {state['shown']}",
                )  # fmt: skip
                if state["shown"]:
                    print(
                        f"INFO  {nb}: opened untrusted: the animation shows its first frame (player inactive)"
                    )
                else:
                    print(
                        f"INFO  {nb}: opened untrusted: the animation's picture is EMPTY (broken-image icon) "
                        "and its buttons do nothing until the cell is run; only the stored still images show"
                    )

        if light:
            check_claims_tables(page, report, nb, claims_notebooks(path))
            check_fonts(report, nb, notebook_language(path))
            check_glyphs(page, report, nb, "opened untrusted")
            report.check(
                nb, "no JavaScript errors in the page", not console_errors, "; ".join(console_errors[:3])
            )
            return time.monotonic() - started

        # 2. Restart Kernel and Run All Cells.
        ran = restart_and_run_all(page, timeout_s)
        report.check(
            nb, "Restart Kernel and Run All Cells finishes", ran, f"{stored['code_cells']} code cells"
        )
        shot(page, None, shots, f"{stem}_2_after_run_all")
        check_images(page, report, nb, "after run all", stored["images"])
        check_errors(page, report, nb, "after run all", stored["raises"])
        figures = page.locator('.jp-Notebook .jp-OutputArea-output[data-mime-type^="image/"]')
        for i in range(figures.count()):
            shot(page, figures.nth(i), shots, f"{stem}_2_figure{i + 1}")
        check_picture_text(page, report, nb, "after run all")
        check_claims_tables(page, report, nb, claims_notebooks(path))
        check_fonts(report, nb, notebook_language(path))
        check_glyphs(page, report, nb, "after run all")
        tables = page.locator(".jp-Notebook table.lessons-claims")
        for i in range(tables.count()):
            tables.nth(i).scroll_into_view_if_needed()
            shot(page, tables.nth(i), shots, f"{stem}_8_claims_table{i + 1}")
        if stored["animations"]:
            check_animation(page, report, nb, shots, stem)
        if stored["widgets"]:
            check_sliders(page, report, nb, shots, stem)
        report.check(
            nb, "no JavaScript errors in the page", not console_errors, "; ".join(console_errors[:3])
        )
    except Exception as error:  # a step timed out or an element was missing: report it, go on
        report.check(nb, "the checks ran to the end", False, f"{type(error).__name__}: {str(error)[:300]}")
        shot(page, None, shots, f"{stem}_9_stopped_here")
    finally:
        page.close()
        lab.shutdown_kernels()
    return time.monotonic() - started


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a page closed mid-download: fine
            super().handle_error(request, client_address)


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    """Serve ``directory`` on 127.0.0.1 (a free port) from a background thread."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


JS_LINKS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
    .filter(h => h.startsWith(location.origin)).map(h => h.split('#')[0])"""

JS_PAGE_IMAGES = """() => Array.from(document.querySelectorAll('img'))
    .map(img => ({src: (img.getAttribute('src') || '').slice(0, 80),
                  shown: img.complete && img.naturalWidth > 0}))"""


def check_site(browser, site: Path, report: Report, shots: Path, timeout_s: float) -> float:
    """The static site: the index, every link of it and of one notebook page, that page's pictures
    and its animation (the page of notebook 02 when there is one)."""
    started, name = time.monotonic(), "site"
    server = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    page = browser.new_page()
    page.route("**/*", keep_local)
    console_errors: list[str] = []
    page.on("pageerror", lambda e: console_errors.append(str(e)))

    def status(url: str) -> int:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        page.goto(f"{base}/index.html", wait_until="load", timeout=timeout_s * 1000)
        shot(page, None, shots, "site_index")
        links = sorted(set(page.evaluate(JS_LINKS)))
        pages = [u for u in links if u.endswith(".html") and not u.endswith("/index.html")]
        broken = [u for u in links if status(u) != 200]
        report.check(name, "index: every link opens", bool(pages) and not broken,
                     f"{len(pages)} notebook pages linked; broken: {broken[:3]}")
        target = next((u for u in pages if "/02" in u), pages[0] if pages else None)
        if target is None:
            return time.monotonic() - started
        page.goto(target, wait_until="load", timeout=timeout_s * 1000)
        page.wait_for_timeout(1000)
        shot(page, None, shots, "site_page")
        label = target.rsplit("/", 1)[-1]
        images = page.evaluate(JS_PAGE_IMAGES)
        report.check(name, f"{label}: every picture shows", bool(images) and all(i["shown"] for i in images),
                     f"{sum(i['shown'] for i in images)} of {len(images)} shown")
        page_links = sorted(set(page.evaluate(JS_LINKS)))
        broken = [u for u in page_links if status(u) != 200]
        report.check(name, f"{label}: every link opens (navigation between lessons)", not broken,
                     f"{len(page_links)} links; broken: {broken[:3]}")
        player = page.locator(".animation")
        if player.count():
            before = page.evaluate("() => document.querySelector('.animation img').getAttribute('src')")
            player.first.locator('button[title="Play"]').click()
            page.wait_for_timeout(2500)
            after = page.evaluate("() => document.querySelector('.animation img').getAttribute('src')")
            player.first.locator('button[title="Pause"]').click()
            report.check(name, f"{label}: the animation plays in the static page", before != after)
        for index in sorted(site.glob("*/index.html")):  # a translated edition (zh/): index, first page
            edition = index.parent.name
            page.goto(f"{base}/{edition}/index.html", wait_until="load", timeout=timeout_s * 1000)
            shot(page, None, shots, f"site_{edition}_index")
            check_glyphs(page, report, name, f"{edition}/index.html", "body")
            first = next(iter(sorted(index.parent.glob("[0-9][0-9]_*.html"))), None)
            if first is not None:
                page.goto(f"{base}/{edition}/{first.name}", wait_until="load", timeout=timeout_s * 1000)
                page.wait_for_timeout(500)
                shot(page, None, shots, f"site_{edition}_page")
                check_glyphs(page, report, name, f"{edition}/{first.name}", "body")
        errors = "; ".join(console_errors[:3])
        report.check(name, "no JavaScript errors in the pages", not console_errors, errors)
    except Exception as error:
        detail = f"{type(error).__name__}: {str(error)[:300]}"
        report.check(name, "the site checks ran to the end", False, detail)
    finally:
        page.close()
        server.shutdown()
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebook paths inside the repository")
    parser.add_argument(
        "--chromium", default="/usr/bin/chromium", help="Chromium executable (default: %(default)s)"
    )
    parser.add_argument(
        "--screenshots", type=Path, help="directory for PNG screenshots (default: a temp dir)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per wait (default: %(default)s)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary copy of the repository and the server log"
    )
    parser.add_argument(
        "--site", type=Path, help="also check the static site built in this directory (lessons.site)"
    )
    parser.add_argument("--json-report", type=Path, help="write every check, per notebook, to this JSON file")
    parser.add_argument(
        "--light-translations", action="store_true",
        help="check a translated notebook (metadata lessons.language not 'en') whose English twin (same file "
        "name, one folder up) is also given as it is stored, opened untrusted, without running it: cells, "
        "images, errors, claims table, fonts and glyphs, one screenshot (the twin's run covers the code)",
    )
    args = parser.parse_args(argv)

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        parser.error(
            "needs Playwright for Python: pip install playwright (then do NOT run 'playwright install')"
        )
    if not Path(args.chromium).exists():
        parser.error(
            f"--chromium: expected a Chromium executable, got {args.chromium!r} (apt-get install chromium)"
        )
    paths = []
    for p in args.notebooks:
        resolved = p.resolve()
        if resolved.suffix != ".ipynb" or not resolved.is_file():
            parser.error(f"notebooks: expected existing .ipynb files, got {str(p)!r}")
        paths.append(resolved)
    outside = [p for p in paths if not p.is_relative_to(REPO)]
    if len({p.name for p in outside}) != len(outside):
        parser.error("notebooks: notebooks from outside the repository must have different names")
    if args.site is not None and not (args.site / "index.html").is_file():
        parser.error(
            f"--site: expected a directory with an index.html (lessons.site), got {str(args.site)!r}"
        )

    workdir = Path(tempfile.mkdtemp(prefix="check_in_jupyterlab_"))
    shots = args.screenshots or workdir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    report = Report()
    lab = Lab(workdir, args.timeout)
    t0 = time.monotonic()
    try:
        lab.start(outside)
        print(
            f"INFO  JupyterLab up in {time.monotonic() - t0:.1f} s (copy of the repository, port {lab.port})"
        )
        with sync_playwright() as pw:
            profile = workdir / "chromium-profile"
            context = pw.chromium.launch_persistent_context(
                str(profile),
                executable_path=args.chromium,
                args=CHROMIUM_FLAGS,
                headless=True,
                viewport={"width": 1400, "height": 1000},
            )
            try:
                given = set(paths)
                for path in paths:
                    light = (args.light_translations and notebook_language(path) != "en"
                             and path.parent.parent / path.name in given)
                    seconds = check_notebook(context, lab, path, report, shots, args.timeout, light=light)
                    label = label_of(path)
                    report.seconds[label] = seconds
                    print(f"TIME  {label}: {seconds:.1f} s to open, run and check", flush=True)
                if args.site is not None:
                    seconds = check_site(context, args.site, report, shots, args.timeout)
                    report.seconds["site"] = seconds
                    print(f"TIME  site: {seconds:.1f} s to open the index and one page", flush=True)
            finally:
                context.close()
    finally:
        lab.stop()
        if not args.keep and args.screenshots:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not args.keep:  # keep the screenshots and the server log only
            for name in (
                "repo",
                "data",
                "runtime",
                "chromium-profile",
                "lab-user-settings",
                "lab-workspaces",
            ):
                shutil.rmtree(workdir / name, ignore_errors=True)
    total = time.monotonic() - t0
    print(f"INFO  total {total:.1f} s; screenshots in {shots}")
    if args.json_report is not None:
        args.json_report.write_text(json.dumps({**report.to_json(), "seconds": round(total, 1)}, indent=1),
                                    encoding="utf-8")
    print(f"{'FAILED' if report.failures else 'OK'}: {report.failures} of {len(report.lines)} checks failed")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
