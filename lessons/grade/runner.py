"""Run one submission in its own sandboxed kernel and collect the probe replies.

The student's code cells run first, in order, with a per-cell timeout; an error does not
stop the next cell. A cell that runs past its time is interrupted; if the kernel does not
come back, or a cell ends the kernel (``os._exit``, a crash, the memory limit), the kernel
is restarted and the cells replayed without that one, so the other exercises are still
graded. Then one probe cell per exercise (:mod:`lessons.grade.probe`). A whole-submission
deadline bounds everything; the kernel is killed when it passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError

from .kernel import CappedClient, SandboxedKernelManager, kill
from .probe import PRELUDE, Question, ReplyError, parse_reply, probe_source
from .sandbox import Sandbox

TIMEOUT_ENAME = "CellTimeout"


@dataclass
class Limits:
    cell_timeout: int = 10  # seconds per student cell
    probe_timeout: int = 10  # seconds per exercise probe
    total_timeout: int = 120  # seconds per submission, everything included
    memory_bytes: int = 1 << 30
    max_output: int = 20_000  # characters kept per cell
    max_restarts: int = 3


class Slots:
    """How many kernels at once: ``jobs`` run student code, ``jobs`` more may be starting or
    waiting (a kernel's start-up overlaps another's work), never more than ``2 * jobs`` alive."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.alive = asyncio.Semaphore(2 * jobs)
        self.start = asyncio.Semaphore(jobs)
        self.run = asyncio.Semaphore(jobs)


@dataclass
class RunResult:
    replies: dict = field(default_factory=dict)  # grade_id -> list of results, or a str reason
    events: dict = field(default_factory=dict)  # key -> text, in order
    cell_errors: dict = field(default_factory=dict)  # cell number -> exception name
    seconds: float = 0.0

    def event(self, key, text: str) -> None:
        self.events.setdefault(key, text)


class _Restart(Exception):
    pass


class _OutOfTime(Exception):
    pass


def _why_dead(km, memory_bytes: int) -> str:
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


async def run_submission(
    cells: list[tuple[int, str]],
    questions: list[Question],
    sandbox: Sandbox,
    limits: Limits,
    workdir: Path,
    slots: Slots | None = None,
) -> RunResult:
    """Run ``cells`` ((cell number, source) pairs) then the probes; never raises for student faults.

    The whole-submission time limit counts from the moment the student's code starts running.
    """
    slots = slots or Slots(1)
    result = RunResult()
    skip_cells: set[int] = set()
    skip_probes: set[str] = set()
    restarts = 0
    state: dict = {}
    nonce = "L13-" + secrets.token_hex(16) + ":"
    run_dir = workdir / "run"
    scratch = workdir / "home"
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    while True:
        km = SandboxedKernelManager(sandbox, run_dir, scratch)
        await slots.alive.acquire()
        try:
            await _attempt(cells, questions, sandbox, limits, km, nonce, slots, result,
                           skip_cells, skip_probes, run_dir, scratch, state)
            break
        except _Restart:
            restarts += 1
            if restarts > limits.max_restarts:
                result.event("restarts", f"gave up after {limits.max_restarts} kernel restarts")
                break
        except _OutOfTime:
            result.event("total", f"stopped at the limit of {limits.total_timeout} s "
                         "for the whole submission")
            break
        except Exception as exc:  # the kernel could not start, or the machinery failed: say so
            result.event("internal", f"the kernel could not be run: {type(exc).__name__}: {exc}"[:300])
            break
        finally:
            await kill(km)
            slots.alive.release()
    for q in questions:
        gid = q.exercise.grade_id
        if gid not in result.replies:
            result.replies[gid] = "not graded: the submission ran out of time or its kernel kept dying"
    result.seconds = time.monotonic() - state.get("started", time.monotonic())
    return result


def _remaining(deadline: float) -> float:
    return deadline - time.monotonic()


async def _run(client: CappedClient, cell, index: int, timeout: float) -> tuple[str, str]:
    """Execute one cell; return (outcome, detail) with outcome one of
    "ok", "error" (detail: the exception name), "timeout", "dead" (the kernel process
    ended) or "broken" (the kernel answered with messages the client cannot read)."""
    client.timeout = int(max(1, timeout))
    client.reset_cap()
    client.last_reply = None
    cell.outputs = []
    try:
        await client.async_execute_cell(cell, index)
    except DeadKernelError:
        return "dead", ""
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # e.g. a student patched json inside the kernel
        return "broken", f"{type(exc).__name__}: {exc}"[:200]
    content = (client.last_reply or {}).get("content", {})
    if content.get("status") == "error":
        if content.get("ename") == TIMEOUT_ENAME:
            return "timeout", ""
        return "error", content.get("ename") or "error"
    return "ok", ""


async def _responsive(client: CappedClient, cell, index: int) -> bool:
    """After an interrupt: does the kernel answer a trivial request within a few seconds?"""
    cell.source = "pass"
    outcome, _ = await _run(client, cell, index, 3)
    return outcome in ("ok", "error")


async def _attempt(cells, questions, sandbox, limits, km, nonce, slots, result,
                   skip_cells, skip_probes, run_dir, scratch, state) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for _, src in cells])
    prelude = nbformat.v4.new_code_cell(PRELUDE)
    spare = nbformat.v4.new_code_cell("pass")  # the liveness check after an interrupt
    probe_cell = nbformat.v4.new_code_cell("")
    nb.cells += [spare, probe_cell]
    spare_index, probe_index = len(nb.cells) - 2, len(nb.cells) - 1
    client = CappedClient(
        nb, km=km, max_output=limits.max_output, nonce=nonce, allow_errors=True,
        interrupt_on_timeout=True, error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timed out"},
        record_timing=False, store_widget_state=False,
        startup_timeout=60,
        iopub_timeout=2, shutdown_kernel="immediate",
    )

    def remember(cell=None, cell_index=None, execute_reply=None, **_):
        client.last_reply = execute_reply

    client.on_cell_executed = remember
    log = open(run_dir / "kernel.log", "ab")  # noqa: SIM115 - closed in finally

    def budget(limit: float) -> float:
        left = _remaining(state["deadline"]) if "deadline" in state else limit
        if left < 1:
            raise _OutOfTime
        return min(limit, left)

    def why(outcome: str, detail: str) -> str:
        if outcome == "dead":
            return _why_dead(km, limits.memory_bytes)
        name = detail.split(":", 1)[0]
        return f"the kernel's messages could not be read ({name}; was json or the messaging patched?)"

    async def run_everything() -> None:
        for index, (number, _) in enumerate(cells):
            if index in skip_cells:
                continue
            timeout = budget(limits.cell_timeout)
            outcome, detail = await _run(client, nb.cells[index], index, timeout)
            if outcome in ("dead", "broken"):
                result.event(("cell", number), f"cell {number}: {why(outcome, detail)}")
                skip_cells.add(index)
                raise _Restart
            if outcome == "timeout":
                if timeout < limits.cell_timeout:
                    raise _OutOfTime
                alive = await _responsive(client, spare, spare_index)
                result.event(("cell", number), f"cell {number} timed out after {int(timeout)} s"
                             + ("" if alive else " and would not stop"))
                if not alive:
                    skip_cells.add(index)
                    raise _Restart
            elif outcome == "error":
                result.cell_errors.setdefault(number, detail)
        # First all exercises in one probe cell; if it fails (time, a dead kernel), the
        # exercises still without a reply are asked one cell each.
        done = set(result.replies) | skip_probes
        pending = [q for q in questions if q.exercise.grade_id not in done]
        if pending and not state.get("one_by_one"):
            state["one_by_one"] = True  # if this cell fails, fall back to one exercise per cell
            probe_cell.source = probe_source(pending, nonce)
            outcome, detail = await _run(client, probe_cell, probe_index, budget(limits.probe_timeout))
            if outcome in ("dead", "broken"):
                raise _Restart
            for q in pending:
                try:
                    result.replies[q.exercise.grade_id] = parse_reply(client.probe_lines, q)
                except ReplyError as exc:
                    if outcome != "timeout" and "no reply" not in str(exc):
                        result.replies[q.exercise.grade_id] = f"could not read the answer: {exc}"
            if outcome == "timeout" and not await _responsive(client, spare, spare_index):
                raise _Restart
        for q in questions:
            gid, name = q.exercise.grade_id, q.exercise.name
            if gid in result.replies or gid in skip_probes:
                continue
            timeout = budget(limits.probe_timeout)
            probe_cell.source = probe_source([q], nonce)
            outcome, detail = await _run(client, probe_cell, probe_index, timeout)
            if outcome in ("dead", "broken"):
                result.replies[gid] = f"grading {name} stopped the kernel: {why(outcome, detail)}"
                skip_probes.add(gid)
                raise _Restart
            if outcome == "timeout":
                if timeout < limits.probe_timeout:
                    raise _OutOfTime
                result.replies[gid] = f"{name} did not return within {int(timeout)} s"
                skip_probes.add(gid)
                if not await _responsive(client, spare, spare_index):
                    raise _Restart
                continue
            try:
                result.replies[gid] = parse_reply(client.probe_lines, q)
            except ReplyError as exc:
                extra = f" ({detail})" if outcome == "error" else ""
                result.replies[gid] = f"could not read the answer: {exc}{extra}"

    try:
        budget(1)
        async with contextlib.AsyncExitStack() as stack:
            async with slots.start:  # start the kernel and set the probe up
                await stack.enter_async_context(client.async_setup_kernel(
                    env=sandbox.env(scratch), cwd=str(scratch), stdout=log, stderr=log))
                outcome, detail = await _run(client, prelude, spare_index, 30)
                if outcome != "ok":
                    raise RuntimeError(f"the grader's probe could not be set up: {outcome} {detail}")
            async with slots.run:
                if "deadline" not in state:
                    state["started"] = time.monotonic()
                    state["deadline"] = state["started"] + limits.total_timeout
                try:  # a last safety net: every step has its own timeout already
                    await asyncio.wait_for(run_everything(), _remaining(state["deadline"]) + 30)
                except asyncio.TimeoutError:
                    raise _OutOfTime from None
    finally:
        log.close()
