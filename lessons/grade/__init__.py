"""``python -m lessons.grade``: grade a class's exercise notebooks, safely (``06``-``09``).

    python -m lessons.grade submissions/ --out grades/            # every *.ipynb under submissions/
    python -m lessons.grade alice.ipynb bob.ipynb --out grades/ --notebook 06
    python -m lessons.grade submissions/ --out grades/ --regrade --seed 1234   # reproduce a grading
    python -m lessons.grade submissions/ --out grades/ --seed 7 --shard 0/4    # one of four shards
    python -m lessons.grade submissions/ --out grades/ --collect               # gradebook from records
    python -m lessons.grade --out grades/ --collect --manual filled.csv        # written answers' points
    python -m lessons.grade --out grades/ --collect --reveal                   # after the deadline

Writes ``grades/gradebook.csv`` (one row per submission: student, points per exercise under
its title, total, maximum, ``result`` — how the student did — and ``grading`` — whether
grading worked), ``grades/results.json`` (details, the seed), ``grades/feedback/<student>.md``
and ``grades/manual.csv`` (written answers, to be graded by a person). The instructor's guide
is ``docs/grading.md``.

The modules, one concern each:

* :mod:`.discovery` — which files, which students, which notebook, which shard;
* :mod:`.loading` — a file's cells (outputs dropped; the sources limited);
* :mod:`.hiding` — the course copy the kernel imports: without the answer keys and the
  grader, with the functions an exercise asks for hidden;
* :mod:`.sandbox`, :mod:`.kernel` — bubblewrap, resource and process limits, the kernel;
* :mod:`.probe` — what the kernel is asked and how its plain-data reply is read;
* :mod:`.runner` — :class:`~.runner.KernelSession`: the cells, each exercise probed right
  after its check cell, timeouts, restarts;
* :mod:`.scoring` — the drawn questions and the one judge's verdicts
  (:func:`lessons.exercises.judge`, the same as the learner's ``check``);
* :mod:`.records` — records, gradebook, feedback, the manual sheet;
* :mod:`.progress` and :mod:`.core` (the run itself, ``collect``);
* :mod:`.course` — the course's own cells, shipped as package data.

nbgrader compatibility: the solution notebooks carry nbgrader's schema-3 cell metadata
(answer cells ``solution: true``; locked check cells ``grade: true`` with ``points``; written
answers as markdown ``solution: true, grade: true``) and its ``### BEGIN SOLUTION`` /
``### END SOLUTION`` markers, so ``nbgrader generate_assignment`` accepts
``solutions/06_exercises.ipynb`` as a source notebook. Under nbgrader's autograder, set
``L13_CHECK_RAISES=1`` in the environment so that a failing ``check`` cell raises and earns
no points (by default ``check`` only prints, so the student notebook always runs).
"""
