"""``python -m lessons.run_notebooks``: a rebuild rewrites a notebook only where it changed."""

from __future__ import annotations

import uuid

import nbformat
import pytest

from lessons.run_notebooks import comparable, execute_notebook, stored

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _notebook(html_id: str, model_id: str, printed: str):
    cell = nbformat.v4.new_code_cell("show()", id="c0")
    cell.execution_count = 1
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": f'<div id="_anim_img{html_id}"></div>'}),
        nbformat.v4.new_output("display_data", data={WIDGET_VIEW: {"model_id": model_id, "version_major": 2,
                                                                   "version_minor": 0}}),
        nbformat.v4.new_output("stream", name="stdout", text=printed),
    ]
    return nbformat.v4.new_notebook(cells=[cell])


def test_two_runs_that_differ_only_in_their_ids_compare_equal():
    a = _notebook(uuid.uuid4().hex, uuid.uuid4().hex, "0.84147098\n")
    b = _notebook(uuid.uuid4().hex, uuid.uuid4().hex, "0.84147098\n")
    assert nbformat.writes(a) != nbformat.writes(b)
    assert comparable(a) == comparable(b)
    assert a.cells[0].outputs[1].data[WIDGET_VIEW]["model_id"]  # the notebooks themselves keep their ids


def test_any_other_difference_is_seen():
    ids = uuid.uuid4().hex, uuid.uuid4().hex
    assert comparable(_notebook(*ids, "0.84147098\n")) != comparable(_notebook(*ids, "-0.84147098\n"))
    changed_source = _notebook(*ids, "0.84147098\n")
    changed_source.cells[0].source = "show(1)"
    assert comparable(_notebook(*ids, "0.84147098\n")) != comparable(changed_source)


def test_stored_is_none_for_a_missing_or_broken_file(tmp_path):
    assert stored(tmp_path / "missing.ipynb") is None
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    assert stored(tmp_path / "broken.ipynb") is None


@pytest.fixture
def drawing_notebook(tmp_path):
    """A notebook whose one cell shows a fresh uuid (as a jshtml player does) and a number read
    from a file the test controls."""
    (tmp_path / "number.txt").write_text("1\n", encoding="utf-8")
    source = ("import uuid\nfrom IPython.display import HTML, display\n"
              "display(HTML(f'<div id=\"_anim_img{uuid.uuid4().hex}\"></div>'))\n"
              "print(open('number.txt').read().strip())")
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, id="c0")]), path)
    return path


def test_a_rerun_that_changes_only_ids_leaves_the_file_byte_for_byte(drawing_notebook):
    execute_notebook(drawing_notebook, timeout=60)
    first = drawing_notebook.read_bytes()
    assert b"_anim_img" in first and b'"1\\n"' in first
    execute_notebook(drawing_notebook, timeout=60)
    assert drawing_notebook.read_bytes() == first


def test_a_rerun_with_a_new_number_is_written(drawing_notebook):
    execute_notebook(drawing_notebook, timeout=60)
    first = drawing_notebook.read_bytes()
    (drawing_notebook.parent / "number.txt").write_text("2\n", encoding="utf-8")
    execute_notebook(drawing_notebook, timeout=60)
    second = drawing_notebook.read_bytes()
    assert second != first and b'"2\\n"' in second


def test_previous_is_what_is_kept_when_the_file_was_overwritten_first(drawing_notebook):
    """The release and the translated build write a cleared notebook, then execute it: the
    notebook stored before that (``previous``) is what an id-only change keeps."""
    execute_notebook(drawing_notebook, timeout=60)
    committed = drawing_notebook.read_bytes()
    previous = stored(drawing_notebook)
    cleared = nbformat.read(drawing_notebook, as_version=4)
    cleared.cells[0].outputs, cleared.cells[0].execution_count = [], None
    nbformat.write(cleared, drawing_notebook)
    execute_notebook(drawing_notebook, timeout=60, previous=previous)
    assert drawing_notebook.read_bytes() == committed
