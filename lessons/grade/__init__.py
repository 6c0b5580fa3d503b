"""``python -m lessons.grade``: grade a class's exercise notebooks, safely (``06``).

    python -m lessons.grade submissions/ --out grades/            # every *.ipynb under submissions/
    python -m lessons.grade alice.ipynb bob.ipynb --out grades/ --notebook 06
    python -m lessons.grade submissions/ --out grades/ --regrade --seed 1234   # reproduce a grading

Writes ``grades/gradebook.csv`` (one row per submission: student, points per exercise,
total, maximum, status), ``grades/results.json`` (details, the seed) and
``grades/feedback/<student>.md``. The instructor's guide is ``docs/grading.md``.

Student ids: ``alice.ipynb`` -> ``alice``; a file named like a course notebook
(``NN_*.ipynb``) takes the first folder below the folder given: ``subs/bob/06_exercises.ipynb``
-> ``bob``, nbgrader's ``submitted/carol/ps1/06_exercises.ipynb`` -> ``carol``. The exercise
set is notebook NN from that name, or ``--notebook NN``.

What it guarantees, and how:

* Student code never runs in the grader's process: each submission gets a fresh kernel
  (:mod:`lessons.grade.kernel`) in a bubblewrap sandbox (:mod:`lessons.grade.sandbox`),
  with a per-cell timeout, a whole-submission timeout, a memory limit (RLIMIT_AS) and capped
  output; a failing cell does not stop the others (:mod:`lessons.grade.runner`).
* Only plain data comes back: the answers, and what the student's functions return on
  inputs drawn now from a recorded seed, as JSON text marked with a per-run nonce
  (:mod:`lessons.grade.probe`); compared in the grader's process with values computed by
  ``lessons`` (:mod:`lessons.exercises`).
* Every submission gets a row, whatever it contains; writes are atomic and a rerun skips
  what is already graded (:mod:`lessons.grade.core`).

nbgrader compatibility: the solution notebooks carry nbgrader's schema-3 cell metadata
(answer cells ``solution: true``; locked check cells ``grade: true`` with ``points``) and
its ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers, so ``nbgrader generate_assignment``
accepts ``solutions/06_exercises.ipynb`` as a source notebook. Under nbgrader's autograder,
set ``L13_CHECK_RAISES=1`` in the environment so that a failing ``check`` cell raises and
earns no points (by default ``check`` only prints, so the student notebook always runs).
"""
