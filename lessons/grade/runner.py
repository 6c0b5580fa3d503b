"""Run one submission in its own sandboxed kernel and collect the probe replies.

:class:`KernelSession` runs the student's code cells in order, with a per-cell timeout; an
error does not stop the next cell. Each exercise is probed right after the cell that calls
its ``check`` has run without an error (as the learner's check and nbgrader's grade cells
judge it), or at the end when no such cell ran. A cell that runs past its time is
interrupted; if the kernel does not come back, or a cell ends the kernel (``os._exit``, a
crash, the memory limit), the kernel is restarted and the cells replayed without that one,
so the other exercises are still graded. A whole-submission deadline bounds everything.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import keyword
import os
import re
import secrets
import signal
import time
import tokenize
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError

from ..exercises._plain import is_tag
from .kernel import CappedClient, SandboxedKernelManager, kill
from .probe import Forged, NoReply, Question, ReplyError, parse_reply, prelude, probe_source
from .sandbox import Sandbox

TIMEOUT_ENAME = "CellTimeout"
_GRADE_ID = r"ex\d\d_\w+"
_CHECK_CALL = re.compile(r"""\bcheck\(\s*["'](""" + _GRADE_ID
                         + r""")["'](?:\s*,\s*([A-Za-z_]\w*)\s*(?=[,)]))?""")


@dataclass
class Limits:
    cell_timeout: int = 10  # seconds per student cell
    probe_timeout: int = 10  # seconds per exercise probe
    total_timeout: int = 120  # seconds per submission, everything included
    memory_bytes: int = 1 << 30
    max_output: int = 20_000  # characters kept per cell
    max_restarts: int = 3
    max_processes: int = 64  # processes (threads included) of the sandbox's user


class Slots:
    """How many kernels at once: ``jobs`` run student code, ``jobs`` more may be starting or
    waiting (a kernel's start-up overlaps another's work), never more than ``2 * jobs`` alive."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.alive = asyncio.Semaphore(2 * jobs)
        self.start = asyncio.Semaphore(jobs)
        self.run = asyncio.Semaphore(jobs)


class NoAnswer(Enum):
    """Why an exercise has no reply to judge (the words are made in :mod:`.records`)."""

    OUT_OF_TIME = "out_of_time"  # the submission's time ran out before the probe
    TIMED_OUT = "timed_out"  # the answer did not return within the probe's time
    KILLED_KERNEL = "killed_kernel"  # probing it ended the kernel
    UNREADABLE = "unreadable"  # the reply could not be read
    FORGED = "forged"  # more than one reply: forged output
    NOT_A_NOTEBOOK = "not_a_notebook"  # the file could not be run at all


@dataclass
class Unanswered:
    why: NoAnswer
    detail: str = ""


@dataclass
class RunResult:
    replies: dict = field(default_factory=dict)  # grade_id -> list of outputs, or Unanswered
    where: dict = field(default_factory=dict)  # grade_id -> cell number probed after (0: at the end)
    events: dict = field(default_factory=dict)  # key -> text, in order
    cell_errors: dict = field(default_factory=dict)  # cell number -> exception name
    hidden_calls: dict = field(default_factory=dict)  # cell number -> message (a hidden function called)
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)  # "kernel_start", "prelude", "cells", "probes" (s)

    def event(self, key, text: str) -> None:
        self.events.setdefault(key, text)


class _Restart(Exception):
    pass


class _OutOfTime(Exception):
    pass


def check_calls(src: str) -> list[tuple[str, str | None]]:
    """The ``check("exNN_...", name)`` calls of a cell's code, in order, as (grade id, the name
    passed, or None when the argument is not a plain name). Read from Python's tokens, so a
    call inside a comment or a string is no call; a cell that does not tokenize is read with
    its comments cut off."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(src).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                    tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        text = "\n".join(line.split("#", 1)[0] for line in src.splitlines())
        return [(m.group(1), m.group(2)) for m in _CHECK_CALL.finditer(text)]
    calls = []
    for i, tok in enumerate(tokens[:-2]):
        if not (tok.type == tokenize.NAME and tok.string == "check" and tokens[i + 1].string == "("
                and tokens[i + 2].type == tokenize.STRING):
            continue
        try:
            gid = ast.literal_eval(tokens[i + 2].string)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(gid, str) or not re.fullmatch(_GRADE_ID, gid):
            continue
        rest = tokens[i + 3:i + 6]
        name = None
        if (len(rest) == 3 and rest[0].string == "," and rest[1].type == tokenize.NAME
                and rest[2].string in (",", ")")):
            name = rest[1].string
        calls.append((gid, name))
    return calls


def checked_names(cells: list[tuple[int, str]], grade_ids) -> dict[str, str | None]:
    """Exercise -> the name its last ``check("id", name)`` call passes, or None when that
    call's argument is no plain name (then the exercise's own name is looked up): the grader
    judges what the learner's own check was given (a function the learner renamed,
    ``check("ex06_rotate_pair", turn_pair)``, included)."""
    names: dict[str, str | None] = {}
    for _, src in cells:
        for gid, name in check_calls(src):
            if gid in grade_ids:
                plain = name is not None and not keyword.iskeyword(name) and not name.startswith("__")
                names[gid] = name if plain else None
    return names


def check_cells(cells: list[tuple[int, str]], grade_ids) -> dict[int, list[str]]:
    """Cell index -> the exercises whose (last) ``check("id", ...)`` call it holds."""
    last: dict[str, int] = {}
    for index, (_, src) in enumerate(cells):
        for gid, _name in check_calls(src):
            if gid in grade_ids:
                last[gid] = index
    out: dict[int, list[str]] = {}
    for gid, index in last.items():
        out.setdefault(index, []).append(gid)
    return out


RUN_FOLDER_BYTES = 64 << 20  # the run folder holds a connection file and five sockets
RUN_FOLDER_ENTRIES = 1000
RUN_FOLDER_POLL = 0.1  # seconds
RUN_FOLDER_DEPTH = 8  # the run folder holds files only; a deeper tree is a kernel hiding its writes


def folder_usage(folder: Path, max_entries: int, max_depth: int = RUN_FOLDER_DEPTH) -> tuple[int, int]:
    """(bytes, entries) under ``folder``, links not followed, walked by file descriptor (no
    recursion, no path length limit). The walk stops past ``max_entries``; a tree deeper than
    ``max_depth`` or one that cannot be read counts as over: (bytes so far, max_entries + 1)."""
    over = max_entries + 1
    size = entries = 0
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    try:
        stack = [(os.open(folder, flags), 0)]
    except OSError:
        return 0, over
    try:
        while stack:
            fd, depth = stack.pop()
            try:
                with os.scandir(fd) as listing:
                    for entry in listing:
                        entries += 1
                        info = entry.stat(follow_symlinks=False)
                        size += max(info.st_size, getattr(info, "st_blocks", 0) * 512)
                        if entries > max_entries:
                            return size, entries
                        if entry.is_dir(follow_symlinks=False):
                            if depth + 1 > max_depth:
                                return size, over
                            stack.append((os.open(entry.name, flags, dir_fd=fd), depth + 1))
            finally:
                os.close(fd)
    except OSError:
        return size, over
    finally:
        for fd, _ in stack:
            try:
                os.close(fd)
            except OSError:
                pass
    return size, entries


def _exception_name(ename) -> str:
    """An error reply's exception name as short plain text, whatever the kernel sent (a
    student can make it a list nested hundreds deep, or three megabytes long)."""
    if not isinstance(ename, str):
        return "error"
    text = "".join(c if c.isprintable() else "?" for c in ename[:MAX_EXCEPTION_NAME])
    return text + ("..." if len(ename) > MAX_EXCEPTION_NAME else "") or "error"


MAX_EXCEPTION_NAME = 80


def why_dead(km, memory_bytes: int) -> str:
    code = None
    try:
        proc = km.provisioner.process
        code = proc.poll() if proc is not None else None
    except Exception:
        pass
    gb = memory_bytes / (1 << 30)
    limit = f"{gb:g} GB" if gb >= 1 else f"{memory_bytes >> 20} MB"
    if code is None:
        return f"the kernel died (memory limit {limit}?)"
    if code < 0 or code > 128:
        signum = -code if code < 0 else code - 128
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        return f"the kernel was killed ({name}; memory limit {limit}?)"
    return f"the kernel exited (exit code {code})"


class Outcome(Enum):
    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    DEAD = "dead"  # the kernel process ended
    BROKEN = "broken"  # the kernel answered with messages the client cannot read


@dataclass
class KernelSession:
    """One submission: its cells and questions, the sandbox and limits, and what happened.

    :meth:`run` starts a kernel (again, after a restart) until every cell ran or was skipped
    and every exercise has a reply; the state that survives a restart (cells to skip,
    exercises already answered, the deadline) lives in the fields.
    """

    cells: list[tuple[int, str]]
    questions: list[Question]
    sandbox: Sandbox
    limits: Limits
    workdir: Path
    python_path: Path | None = None  # the course copy the kernel imports (see hiding.py)
    language: str = "en"  # the submission's language: the kernel's LESSONS_LANG
    slots: Slots | None = None
    result: RunResult = field(default_factory=RunResult)
    skip_cells: set = field(default_factory=set)
    skip_probes: set = field(default_factory=set)
    memory_cells: set = field(default_factory=set)  # cells that ran out of memory (hogs)
    retried: set = field(default_factory=set)  # exercises whose probe ended the kernel once
    restarts: int = 0
    started: float | None = None
    deadline: float | None = None
    nonce: str = field(default_factory=lambda: "L13-" + secrets.token_hex(16) + ":")

    def __post_init__(self):
        self.slots = self.slots or Slots(1)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.kernels = 0  # kernels started so far: each gets folders of its own
        self.by_id = {q.exercise.grade_id: q for q in self.questions}
        self.check_at = check_cells(self.cells, set(self.by_id))
        self.names = checked_names(self.cells, set(self.by_id))
        self.km = None
        self.client: CappedClient | None = None

    def _fresh_folders(self) -> None:
        """New run and home folders for the next kernel: the only ones its sandbox can write.

        Nothing a kernel left behind reaches the next one (a startup file in its home, a
        symlink in place of the connection file); the grader's own log of the kernel's output
        (``kernel.log``) lies beside them in ``workdir``, out of every sandbox's reach.
        """
        self.kernels += 1
        attempt = self.workdir / f"kernel{self.kernels}"
        self.run_dir, self.scratch = attempt / "run", attempt / "home"
        (self.scratch / "tmp").mkdir(parents=True)
        self.run_dir.mkdir(parents=True)

    # ------------------------------------------------------------------ the whole run
    async def run(self) -> RunResult:
        """Run the cells then the remaining probes; never raises for student faults."""
        result = self.result
        while True:
            self._fresh_folders()
            self.km = SandboxedKernelManager(self.sandbox, self.run_dir, self.scratch, self.python_path,
                                             language=self.language)
            await self.slots.alive.acquire()
            try:
                await self._attempt()
                break
            except _Restart:
                self.restarts += 1
                if self.restarts > self.limits.max_restarts:
                    result.event("restarts", f"gave up after {self.limits.max_restarts} kernel restarts")
                    break
            except _OutOfTime:
                result.event("total", f"stopped at the limit of {self.limits.total_timeout} s "
                             "for the whole submission")
                break
            except Exception as exc:  # the kernel could not start, or the machinery failed: say so
                result.event("internal", f"the kernel could not be run: {type(exc).__name__}: {exc}"[:300])
                break
            finally:
                await kill(self.km)
                self.slots.alive.release()
        for q in self.questions:
            result.replies.setdefault(q.exercise.grade_id, Unanswered(NoAnswer.OUT_OF_TIME))
        result.seconds = time.monotonic() - (self.started or time.monotonic())
        return result

    # ----------------------------------------------------------------- one kernel
    async def _attempt(self) -> None:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for _, src in self.cells])
        self.prelude_cell = nbformat.v4.new_code_cell(prelude())
        self.spare = nbformat.v4.new_code_cell("pass")  # the liveness check after an interrupt
        self.probe_cell = nbformat.v4.new_code_cell("")
        nb.cells += [self.spare, self.probe_cell]
        self.spare_index, self.probe_index = len(nb.cells) - 2, len(nb.cells) - 1
        self.nb = nb
        client = CappedClient(
            nb, km=self.km, max_output=self.limits.max_output, nonce=self.nonce, allow_errors=True,
            interrupt_on_timeout=True, error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timed out"},
            record_timing=False, store_widget_state=False, startup_timeout=60,
            iopub_timeout=2, shutdown_kernel="immediate",
        )

        def remember(cell=None, cell_index=None, execute_reply=None, **_):
            client.last_reply = execute_reply

        client.on_cell_executed = remember
        self.client = client
        timings = self.result.timings
        with open(self.workdir / "kernel.log", "ab") as log:
            self._budget(1)
            async with contextlib.AsyncExitStack() as stack:
                async with self.slots.start:  # start the kernel and set the probe up
                    t0 = time.monotonic()
                    await stack.enter_async_context(client.async_setup_kernel(
                        env=self.sandbox.env(self.scratch, self.python_path, self.language),
                        cwd=str(self.scratch), stdout=log, stderr=log))
                    t1 = time.monotonic()
                    watcher = asyncio.ensure_future(self._watch_run_folder())
                    stack.callback(watcher.cancel)
                    outcome, detail = await self._run(self.prelude_cell, self.spare_index, 30)
                    if outcome is not Outcome.OK:
                        raise RuntimeError(f"the grader's probe could not be set up: "
                                           f"{outcome.value} {detail}")
                    timings["kernel_start"] = timings.get("kernel_start", 0.0) + t1 - t0
                    timings["prelude"] = timings.get("prelude", 0.0) + time.monotonic() - t1
                async with self.slots.run:
                    if self.deadline is None:
                        self.started = time.monotonic()
                        self.deadline = self.started + self.limits.total_timeout
                    try:  # a last safety net: every step has its own timeout already
                        await asyncio.wait_for(self._run_everything(), self._remaining() + 30)
                    except asyncio.TimeoutError:
                        raise _OutOfTime from None

    async def _watch_run_folder(self) -> None:
        """Stop the kernel when its run folder (on the grader's disk, writable in the sandbox for
        its sockets) holds more than :data:`RUN_FOLDER_BYTES` or :data:`RUN_FOLDER_ENTRIES`: its
        home is a sized tmpfs, but this folder cannot be one."""
        while True:
            await asyncio.sleep(RUN_FOLDER_POLL)
            if self._run_folder_over():
                self.result.event("run-folder", self._run_folder_words())
                await kill(self.km)  # the whole sandbox: its cgroups' processes too
                return

    def _run_folder_over(self) -> bool:
        size, entries = folder_usage(self.run_dir, RUN_FOLDER_ENTRIES)
        return size > RUN_FOLDER_BYTES or entries > RUN_FOLDER_ENTRIES

    @staticmethod
    def _run_folder_words() -> str:
        return (f"the kernel wrote more than {RUN_FOLDER_BYTES >> 20} MB, {RUN_FOLDER_ENTRIES} files or "
                f"{RUN_FOLDER_DEPTH} folders deep into its run folder, and was stopped")

    def _remaining(self) -> float:
        return (self.deadline or time.monotonic()) - time.monotonic()

    def _budget(self, limit: float) -> float:
        if self.deadline is None:
            return limit
        left = self._remaining()
        if left < 1:
            raise _OutOfTime
        return min(limit, left)

    def _why(self, outcome: Outcome, detail: str) -> str:
        if outcome is Outcome.DEAD:
            return why_dead(self.km, self.limits.memory_bytes)
        name = detail.split(":", 1)[0]
        return f"the kernel's messages could not be read ({name}; was json or the messaging patched?)"

    async def _run(self, cell, index: int, timeout: float) -> tuple[Outcome, str]:
        """Execute one cell; return (outcome, detail: the exception's name for an error)."""
        client = self.client
        client.timeout = int(max(1, timeout))
        client.reset_cap()
        client.last_reply = None
        cell.outputs = []
        try:
            await client.async_execute_cell(cell, index)
        except DeadKernelError:
            return Outcome.DEAD, ""
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. a student patched json inside the kernel
            return Outcome.BROKEN, f"{type(exc).__name__}: {exc}"[:200]
        content = (client.last_reply or {}).get("content", {})
        if content.get("status") == "error":
            if content.get("ename") == TIMEOUT_ENAME:
                return Outcome.TIMEOUT, ""
            return Outcome.ERROR, _exception_name(content.get("ename"))
        return Outcome.OK, ""

    async def _responsive(self) -> bool:
        """After an interrupt: does the kernel answer a trivial request within a few seconds?"""
        self.spare.source = "pass"
        outcome, _ = await self._run(self.spare, self.spare_index, 3)
        return outcome in (Outcome.OK, Outcome.ERROR)

    async def _run_everything(self) -> None:
        t0 = time.monotonic()
        probe_seconds = 0.0
        for index, (number, _) in enumerate(self.cells):
            if index in self.skip_cells:
                continue
            timeout = self._budget(self.limits.cell_timeout)
            outcome, detail = await self._run(self.nb.cells[index], index, timeout)
            if outcome is not Outcome.DEAD and self._run_folder_over():  # this cell filled it: skip it
                self.result.event("run-folder", self._run_folder_words())
                self.result.event(("cell", number), f"cell {number}: stopped for writing into the run folder")
                self.skip_cells.add(index)
                raise _Restart
            if outcome in (Outcome.DEAD, Outcome.BROKEN):
                self.result.event(("cell", number), f"cell {number}: {self._why(outcome, detail)}")
                self.skip_cells.add(index)
                raise _Restart
            if outcome is Outcome.TIMEOUT:
                if timeout < self.limits.cell_timeout:
                    raise _OutOfTime
                alive = await self._responsive()
                self.result.event(("cell", number), f"cell {number} timed out after {int(timeout)} s"
                                  + ("" if alive else " and would not stop"))
                if not alive:
                    self.skip_cells.add(index)
                    raise _Restart
            elif outcome is Outcome.ERROR:
                self.result.cell_errors.setdefault(number, detail)
                if detail == "MemoryError":
                    self.memory_cells.add(index)
                if detail == "HiddenByGrader":
                    self.result.hidden_calls.setdefault(number, detail)
            elif index in self.check_at:  # the check cell ran: judge its exercises now
                p0 = time.monotonic()
                for gid in self.check_at[index]:
                    await self._probe(self.by_id[gid], number)
                probe_seconds += time.monotonic() - p0
        p0 = time.monotonic()
        for q in self.questions:  # no check cell ran for these: judged at the end
            await self._probe(q, 0)
        probe_seconds += time.monotonic() - p0
        timings = self.result.timings
        timings["probes"] = timings.get("probes", 0.0) + probe_seconds
        timings["cells"] = timings.get("cells", 0.0) + time.monotonic() - t0 - probe_seconds

    async def _probe(self, q: Question, number: int) -> None:
        gid = q.exercise.grade_id
        result = self.result
        if gid in result.replies or gid in self.skip_probes:
            return
        if q.exercise.kind != "checker":
            reply = await self._ask(q)
        else:
            # One candidate per probe cell, each asked after the verdict on the one before:
            # the learner's checker never holds the candidates still to come (it could
            # otherwise run them all from the probe's frame and vote for the right one).
            verdicts: dict = {}
            reply = verdicts
            for key, source in q.candidates:
                one = replace(q, candidates=((key, source),), keys={key: q.keys[key]})
                got = await self._ask(one)
                if not isinstance(got, dict) or is_tag(got):  # unanswered, or a whole-answer tag
                    reply = got
                    break
                verdicts.update(got)
        if reply is None:  # the kernel was restarted or timed out: _ask recorded why, or will retry
            return
        result.replies[gid] = reply
        if not isinstance(reply, Unanswered):
            result.where[gid] = number

    async def _ask(self, q: Question):
        """One probe cell about ``q``: its parsed reply, an :class:`Unanswered`, or None when
        the exercise's reply is already recorded (a time-out the kernel survived)."""
        gid, name = q.exercise.grade_id, q.exercise.name
        result = self.result
        # a checker exercise calls the learner's checker once per candidate, each with its limit
        limit = self.limits.probe_timeout + len(q.candidates) * q.exercise.time_limit
        timeout = self._budget(limit)
        self.probe_cell.source = probe_source(q, self.nonce, self.names.get(gid))
        outcome, detail = await self._run(self.probe_cell, self.probe_index, timeout)
        if outcome in (Outcome.DEAD, Outcome.BROKEN):
            if gid not in self.retried and self.memory_cells:
                # The kernel may have died of a cell that hoarded memory: once, try again
                # after a restart without the cells that ran out of memory.
                self.retried.add(gid)
                self.skip_cells |= self.memory_cells
                raise _Restart
            result.replies[gid] = Unanswered(NoAnswer.KILLED_KERNEL, f"{name}: {self._why(outcome, detail)}")
            self.skip_probes.add(gid)
            raise _Restart
        if outcome is Outcome.TIMEOUT:
            if timeout < limit:
                raise _OutOfTime
            result.replies[gid] = Unanswered(NoAnswer.TIMED_OUT,
                                             f"{name} did not return within {int(timeout)} s")
            self.skip_probes.add(gid)
            if not await self._responsive():
                raise _Restart
            return None
        try:
            return parse_reply(self.client.probe_lines, q)
        except Forged as exc:
            return Unanswered(NoAnswer.FORGED, str(exc))
        except (NoReply, ReplyError) as exc:
            extra = f" ({detail})" if outcome is Outcome.ERROR else ""
            return Unanswered(NoAnswer.UNREADABLE, f"{exc}{extra}")


async def run_submission(cells, questions, sandbox, limits, workdir, slots=None,
                         python_path=None, language: str = "en") -> RunResult:
    """Run ``cells`` ((cell number, source) pairs) and the probes of ``questions``, in a kernel
    whose ``LESSONS_LANG`` is ``language``."""
    session = KernelSession(cells, questions, sandbox, limits, workdir, python_path=python_path, slots=slots,
                            language=language)
    return await session.run()
