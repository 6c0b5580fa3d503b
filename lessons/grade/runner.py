"""Run one submission in its own sandboxed kernel and collect the probe replies.

The student's code cells run first, in order, with a per-cell timeout; an error does not
stop the next cell. A cell that runs past its time is interrupted; if the kernel does not
come back, or a cell ends the kernel (``os._exit``, a crash, the memory limit), the kernel
is restarted and the cells replayed without that one, so the other exercises are still
graded. Then one probe cell per exercise (:mod:`lessons.grade.probe`). A whole-submission
deadline bounds everything; the kernel is killed when it passes.
"""

from __future__ import annotations

import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError

from .kernel import CappedClient, SandboxedKernelManager, kill
from .probe import Question, ReplyError, parse_reply, probe_source
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


def _first_error(cell) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename", ""), out.get("evalue", "")
    return None


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
) -> RunResult:
    """Run ``cells`` ((cell number, source) pairs) then the probes; never raises for student faults."""
    start = time.monotonic()
    deadline = start + limits.total_timeout
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
        try:
            await _attempt(cells, questions, sandbox, limits, km, nonce, deadline, result,
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
    for q in questions:
        gid = q.exercise.grade_id
        if gid not in result.replies:
            result.replies[gid] = "not graded: the submission ran out of time or its kernel kept dying"
    result.seconds = time.monotonic() - start
    return result


def _remaining(deadline: float) -> float:
    return deadline - time.monotonic()


async def _responsive(client: CappedClient, cell, index: int) -> bool:
    """After an interrupt: does the kernel answer a trivial request within a few seconds?"""
    client.timeout = 3
    cell.source = "pass"
    cell.outputs = []
    try:
        await client.async_execute_cell(cell, index)
    except DeadKernelError:
        return False
    err = _first_error(cell)
    return not (err and err[0] == TIMEOUT_ENAME)


async def _attempt(cells, questions, sandbox, limits, km, nonce, deadline, result,
                   skip_cells, skip_probes, run_dir, scratch, state) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for _, src in cells])
    spare = nbformat.v4.new_code_cell("pass")  # the liveness check after an interrupt
    probe_cell = nbformat.v4.new_code_cell("")
    nb.cells += [spare, probe_cell]
    spare_index, probe_index = len(nb.cells) - 2, len(nb.cells) - 1
    client = CappedClient(
        nb, km=km, max_output=limits.max_output, nonce=nonce, allow_errors=True,
        interrupt_on_timeout=True, error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timed out"},
        record_timing=False, store_widget_state=False,
        startup_timeout=max(5, int(min(60, _remaining(deadline)))),
        iopub_timeout=2, shutdown_kernel="immediate",
    )
    log = open(run_dir / "kernel.log", "ab")  # noqa: SIM115 - closed in finally
    try:
        if _remaining(deadline) <= 0:
            raise _OutOfTime
        async with client.async_setup_kernel(env=sandbox.env(scratch), cwd=str(scratch),
                                             stdout=log, stderr=log):
            for index, (number, _) in enumerate(cells):
                if index in skip_cells:
                    continue
                budget = _remaining(deadline)
                if budget < 1:
                    raise _OutOfTime
                timeout = int(max(1, min(limits.cell_timeout, budget)))
                client.timeout = timeout
                client.reset_cap()
                cell = nb.cells[index]
                try:
                    await client.async_execute_cell(cell, index)
                except DeadKernelError:
                    result.event(("cell", number), f"cell {number}: {_why_dead(km, limits.memory_bytes)}")
                    skip_cells.add(index)
                    raise _Restart from None
                err = _first_error(cell)
                if err and err[0] == TIMEOUT_ENAME:
                    if timeout < limits.cell_timeout:
                        raise _OutOfTime
                    alive = await _responsive(client, spare, spare_index)
                    result.event(("cell", number), f"cell {number} timed out after {timeout} s"
                                 + ("" if alive else " and would not stop"))
                    if not alive:
                        skip_cells.add(index)
                        raise _Restart
                elif err:
                    result.cell_errors.setdefault(number, err[0] or "error")
            # First all exercises in one probe cell; if it fails (time, a dead kernel), the
            # exercises still without a reply are asked one cell each.
            done = set(result.replies) | skip_probes
            pending = [q for q in questions if q.exercise.grade_id not in done]
            if pending and not state.get("one_by_one"):
                budget = _remaining(deadline)
                if budget < 1:
                    raise _OutOfTime
                client.timeout = int(max(1, min(limits.probe_timeout, budget)))
                client.reset_cap()
                probe_cell.source = probe_source(pending, nonce)
                probe_cell.outputs = []
                state["one_by_one"] = True  # if this cell fails, fall back to one exercise per cell
                try:
                    await client.async_execute_cell(probe_cell, probe_index)
                except DeadKernelError:
                    raise _Restart from None
                err = _first_error(probe_cell)
                timed_out = bool(err and err[0] == TIMEOUT_ENAME)
                for q in pending:
                    try:
                        result.replies[q.exercise.grade_id] = parse_reply(client.probe_lines, q)
                    except ReplyError as exc:
                        if not timed_out and "no reply" not in str(exc):
                            result.replies[q.exercise.grade_id] = f"could not read the answer: {exc}"
                if timed_out and not await _responsive(client, spare, spare_index):
                    raise _Restart
            for q in questions:
                gid = q.exercise.grade_id
                if gid in result.replies or gid in skip_probes:
                    continue
                budget = _remaining(deadline)
                if budget < 1:
                    raise _OutOfTime
                timeout = int(max(1, min(limits.probe_timeout, budget)))
                client.timeout = timeout
                client.reset_cap()
                probe_cell.source = probe_source([q], nonce)
                probe_cell.outputs = []
                name = q.exercise.name
                try:
                    await client.async_execute_cell(probe_cell, probe_index)
                except DeadKernelError:
                    why = _why_dead(km, limits.memory_bytes)
                    result.replies[gid] = f"grading {name} stopped the kernel: {why}"
                    skip_probes.add(gid)
                    raise _Restart from None
                err = _first_error(probe_cell)
                if err and err[0] == TIMEOUT_ENAME:
                    if timeout < limits.probe_timeout:
                        raise _OutOfTime
                    result.replies[gid] = f"{name} did not return within {timeout} s"
                    skip_probes.add(gid)
                    if not await _responsive(client, spare, spare_index):
                        raise _Restart
                    continue
                try:
                    result.replies[gid] = parse_reply(client.probe_lines, q)
                except ReplyError as exc:
                    detail = f" ({err[0]}: {err[1]})"[:200] if err else ""
                    result.replies[gid] = f"could not read the answer: {exc}{detail}"
    finally:
        log.close()
