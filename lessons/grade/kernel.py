"""One student kernel: a sandboxed ipykernel over unix sockets, driven by nbclient.

:class:`SandboxedKernelManager` is jupyter_client's ``AsyncKernelManager`` with the launch
command replaced by :meth:`Sandbox.command` (``format_kernel_cmd`` is the documented hook),
the ``ipc`` transport (socket files in the kernel's run folder, bound into the sandbox at
the same path) and message-based interrupts (a signal to ``bwrap`` would not reach the
kernel). :class:`CappedClient` is nbclient's ``NotebookClient`` keeping at most
``max_output`` characters of a cell's output, and handing the grader's probe lines to it
before any cap applies.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import zmq
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from .sandbox import MemoryCgroup, PidsCgroup, Sandbox

# The largest message the grader takes from a kernel: a cell's figures are a few hundred kB.
MAX_MESSAGE_BYTES = 32 << 20


class SandboxedKernelManager(AsyncKernelManager):
    def __init__(self, sandbox: Sandbox, run_dir: Path, scratch: Path, python_path: Path | None = None,
                 language: str = "en", **kw):
        super().__init__(transport="ipc", ip=str(run_dir / "k"),
                         connection_file=str(run_dir / "kernel.json"), **kw)
        self._sandbox = sandbox
        self._run_dir = run_dir
        self._scratch = scratch
        self._python_path = python_path
        self._language = language  # LESSONS_LANG of the kernel: the submission's language
        self.pids_group: Path | None = None
        self.memory_group: Path | None = None
        self._kernel_spec = KernelSpec(argv=["python"], display_name="sandboxed python", language="python",
                                       interrupt_mode="message")

    @property
    def kernel_spec(self):  # never look a kernel spec up: ours is fixed
        return self._kernel_spec

    def client(self, **kwargs):
        """The client, its sockets refusing any message over :data:`MAX_MESSAGE_BYTES` (ZMQ
        drops the connection instead): a kernel cannot fill the grader's memory with a few
        huge messages it wrote straight to its sockets, past every output cap."""
        kc = super().client(**kwargs)
        kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        return kc

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = self._sandbox.command(self._run_dir, self._scratch, self.connection_file, self._python_path,
                                    language=self._language)
        if self._sandbox.bwrap is None:
            return cmd
        PidsCgroup.remove(self.pids_group)  # a restarted kernel gets fresh ones
        MemoryCgroup.remove(self.memory_group)
        name = f"l13-{os.getpid()}-{self._run_dir.parent.name}-{id(self):x}"
        self.pids_group = PidsCgroup.create(name, self._sandbox.max_processes)
        memory = self._sandbox.memory_bytes + max(self._sandbox.home_bytes, 0)  # the home is memory too
        # the same name: on cgroup v2 (one tree) that is one group holding both limits
        self.memory_group = MemoryCgroup.create(name, memory if self._sandbox.memory_bytes > 0 else 0)
        return PidsCgroup.wrap(self.pids_group, MemoryCgroup.wrap(self.memory_group, cmd))


class CappedClient(NotebookClient):
    """NotebookClient that truncates outputs and forwards probe lines to ``on_probe_text``."""

    def __init__(self, nb, km=None, max_output: int = 20_000, nonce: str = "", **kw):
        super().__init__(nb, km=km, **kw)
        self.max_output = max_output
        self.nonce = nonce
        self.probe_lines: list[str] = []
        self.last_reply: dict | None = None
        self._used = 0
        self._truncated = False

    def reset_cap(self) -> None:
        self._used = 0
        self._truncated = False
        self.probe_lines = []

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        text = content.get("text", "") if msg.get("msg_type") == "stream" else ""
        if self.nonce and isinstance(text, str) and self.nonce in text:  # never split a flood into lines
            for line in text.splitlines():
                if line.startswith(self.nonce):
                    self.probe_lines.append(line[len(self.nonce):])
        size = (len(str(content.get("text", ""))) + sum(len(str(v)) for v in content.get("data", {}).values())
                + sum(len(str(t)) for t in content.get("traceback", [])))
        self._used += size
        if self._used > self.max_output:
            if not self._truncated:
                self._truncated = True
                outs.append({"output_type": "stream", "name": "stderr",
                             "text": f"[output truncated at {self.max_output} characters]\n"})
            return None
        return super().output(outs, msg, display_id, cell_index)


async def kill(km: AsyncKernelManager | None) -> None:
    """Stop a kernel now, whatever state it is in."""
    if km is None:
        return
    try:
        if km.has_kernel:
            await asyncio.wait_for(km.shutdown_kernel(now=True), 10)
    except Exception:
        try:
            await km.kill_kernel()
        except Exception:
            pass
    try:
        await km.cleanup_resources()
    except Exception:
        pass
    PidsCgroup.remove(getattr(km, "pids_group", None))
    MemoryCgroup.remove(getattr(km, "memory_group", None))
