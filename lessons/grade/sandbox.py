"""The student kernel's sandbox: bubblewrap, resource limits and the launch command.

A kernel is started as::

    bwrap <binds> -- python -c <LIMITS> <memory bytes> <connection file>

where ``<LIMITS>`` sets RLIMIT_AS (the memory limit), RLIMIT_FSIZE, RLIMIT_CORE and, in the
sandbox, RLIMIT_NPROC (processes and threads of the sandbox's user; each sandbox is its own
user namespace, so the count is per submission) and then starts ipykernel in the same
process (``-f <connection file>``). The sandbox
(Linux, bubblewrap) shows the kernel only:

* ``/usr`` (and the ``/bin``, ``/lib``, ``/lib64``, ``/sbin`` links to it), read-only;
* a few files of ``/etc`` that the dynamic loader and Python read (never passwd/shadow);
* the Python installation (``sys.base_prefix``) and the environment (``sys.prefix``), read-only,
  with the ``lessons`` package (the answer keys) covered by an empty folder if it lies in them
  and an editable install's ``.pth`` hook covered by an empty file;
* the course's ``lessons`` as the notebook being graded may see it (:mod:`.hiding`: without
  the answer keys and the grader, with the functions an exercise asks for hidden), read-only,
  first on PYTHONPATH;
* its run folder (connection file and the kernel's unix sockets: ``transport="ipc"``, since
  the network namespace is private and TCP localhost is unreachable; on the grader's disk,
  watched by the runner) and its home, the only writable places; HOME and TMPDIR point into
  the home, a tmpfs of ``home_bytes`` where bubblewrap can size one (else the scratch folder);
* a fresh ``/proc``, a minimal ``/dev``, a private ``/tmp`` (sized like the home);
* ``LESSONS_LANG`` set to the submission's language (:func:`lessons.i18n.language`), so that
  a Chinese notebook's ``check`` speaks Chinese in the kernel too.

It runs as an unprivileged uid in new user, pid, network, ipc, uts and cgroup namespaces
(``--unshare-all``), in a new session, and dies with the grader (``--die-with-parent``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Set the limits, then become the kernel (in the same process: one interpreter start).
# debugpy is blocked: ipykernel then runs without its debugger, which saves a fifth of the
# kernel's start-up time and is never needed for grading.
LIMITS = (
    "import os, resource, sys\n"
    "m = int(sys.argv[1])\n"
    "if m > 0: resource.setrlimit(resource.RLIMIT_AS, (m, m))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 28, 1 << 28))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "n = int(sys.argv[3])\n"
    "if n > 0: resource.setrlimit(resource.RLIMIT_NPROC, (n, n))\n"
    "sys.modules['debugpy'] = None\n"
    "if sys.path and sys.path[0] in ('', os.getcwd()): del sys.path[0]\n"
    "sys.argv = [sys.argv[0], '-f', sys.argv[2], '--HistoryManager.enabled=False']\n"
    "from ipykernel import kernelapp\n"
    "kernelapp.launch_new_instance()\n"
)

ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "mime.types")
HOME_BYTES = 256 << 20  # a kernel's home: a tmpfs this large, so no submission fills the machine's disk


def sized_tmpfs(bwrap: str) -> bool:
    """Can this bubblewrap make a tmpfs of a given size, owned by the sandbox's user (0.8 and later:
    ``--size`` and ``--perms`` before ``--tmpfs``)?"""
    import subprocess

    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in text and "--perms" in text



def bwrap_path() -> str | None:
    """The bubblewrap executable, or None where it is missing (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    return shutil.which("bwrap")


def bwrap_works(bwrap: str) -> tuple[bool, str]:
    """Try bubblewrap once (it can be installed but refused, e.g. without user namespaces)."""
    import subprocess

    cmd = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
           *_usr_links(), "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return done.returncode == 0, done.stderr.strip()


def _usr_links() -> list[str]:
    args = []
    for name in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def lessons_dirs() -> list[Path]:
    """Folders holding the ``lessons`` package (the answer keys), to hide from the kernel."""
    spec = importlib.util.find_spec("lessons")
    dirs = []
    for loc in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(Path(loc).resolve())
    return dirs


def install_hooks(prefixes: list[Path]) -> list[Path]:
    """Files of an editable install that point at the package (a ``.pth`` file and its
    finder), covered with an empty file so that the kernel does not even learn the path."""
    import site

    found = []
    names = [str(d) for d in lessons_dirs()]
    for sp in {*site.getsitepackages(), site.getusersitepackages()}:
        folder = Path(sp)
        if not folder.is_dir() or not any(_covers(p, folder.resolve()) for p in prefixes):
            continue
        texts = {}
        for f in [*folder.glob("*.pth"), *folder.glob("__editable__*.py")]:
            try:
                texts[f] = f.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        finders = [f for f, text in texts.items() if any(n in text for n in names)]
        found += finders
        stems = [f.stem for f in finders if f.suffix == ".py"]
        found += [f for f, text in texts.items()
                  if f.suffix == ".pth" and f not in finders and any(stem in text for stem in stems)]
    return sorted(set(found))


def _covers(parent: Path, child: Path) -> bool:
    try:
        child.relative_to(parent)
        return True
    except ValueError:
        return False


@dataclass
class Sandbox:
    """How kernels are launched: with bubblewrap (``bwrap`` set) or unsandboxed (None)."""

    bwrap: str | None
    memory_bytes: int
    stub_dir: Path | None = None  # a default course copy (python_path) for kernels given none
    max_processes: int = 64
    hooks: list[Path] = field(default_factory=list)
    home_bytes: int = HOME_BYTES  # the size of the kernel's home (a tmpfs, where bubblewrap can size one)

    def __post_init__(self):
        if self.bwrap is not None and not self.hooks:
            self.hooks = install_hooks(self._prefixes())

    def _sized_tmpfs(self) -> bool:
        if not hasattr(self, "_sized"):
            self._sized = bool(self.bwrap) and sized_tmpfs(self.bwrap)
        return self._sized

    def _prefixes(self) -> list[Path]:
        prefixes = []
        for prefix in (Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
                       Path(sys.prefix), Path(sys.base_prefix)):
            if not _covers(Path("/usr"), prefix) and prefix not in prefixes:
                prefixes.append(prefix)
        return prefixes

    def command(self, run_dir: Path, scratch: Path, connection_file: str,
                python_path: Path | None = None, language: str = "en") -> list[str]:
        python = sys.executable
        python_path = python_path or self.stub_dir
        nproc = self.max_processes if self.bwrap is not None else 0  # unsandboxed: your own uid
        inner = [python, "-c", LIMITS, str(self.memory_bytes), connection_file, str(nproc)]
        if self.bwrap is None:
            return inner
        home = "/home/student"
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
                "--ro-bind", "/usr", "/usr", *_usr_links()]
        for name in ETC_FILES:
            if os.path.exists(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        # A private /tmp first: binds made after it (the environment, the run folder) stay
        # visible even when they lie under /tmp, as a CI clone's virtual environment may.
        if self.home_bytes > 0 and self._sized_tmpfs():
            args += ["--size", str(self.home_bytes)]
        args += ["--tmpfs", "/tmp"]
        prefixes = self._prefixes()
        for prefix in sorted(prefixes):
            args += ["--ro-bind", str(prefix), str(prefix)]
        for hidden in lessons_dirs():
            if any(_covers(p, hidden) for p in prefixes) or _covers(Path("/usr"), hidden):
                args += ["--tmpfs", str(hidden)]
        for hook in self.hooks:
            args += ["--ro-bind", "/dev/null", str(hook)]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--ro-bind", str(python_path), "/opt/l13",
                 "--bind", str(run_dir), str(run_dir)]
        if self.home_bytes > 0 and self._sized_tmpfs():
            # The home in memory, and no larger than home_bytes: a kernel that writes until the
            # disk is full fills only its own tmpfs (and it goes with the sandbox).
            args += ["--size", str(self.home_bytes), "--perms", "0700", "--tmpfs", home,
                     "--perms", "0700", "--dir", f"{home}/tmp"]
        else:
            args += ["--bind", str(scratch), home]
        args += ["--chdir", home,
                 "--clearenv",
                 "--setenv", "HOME", home, "--setenv", "TMPDIR", f"{home}/tmp",
                 "--setenv", "USER", "student", "--setenv", "LANG", "C.UTF-8",
                 "--setenv", "PATH", f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
                 "--setenv", "PYTHONPATH", "/opt/l13",
                 "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
                 "--setenv", "MPLBACKEND", "agg",
                 "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1",
                 "--setenv", "MKL_NUM_THREADS", "1",
                 "--setenv", "LESSONS_LANG", language,
                 "--", *inner]
        return args

    def env(self, scratch: Path, python_path: Path | None = None, language: str = "en") -> dict:
        """The environment of an unsandboxed kernel (the sandboxed one clears its own)."""
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
        return {**keep, "HOME": str(scratch), "TMPDIR": str(scratch / "tmp"), "USER": "student",
                "PYTHONPATH": str(python_path or self.stub_dir), "PYTHONDONTWRITEBYTECODE": "1",
                "MPLBACKEND": "agg", "LESSONS_LANG": language,
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ----------------------------------------------------------------- processes per submission
class PidsCgroup:
    """A pids-limited cgroup per kernel, where this machine lets the grader make one.

    RLIMIT_NPROC bounds the sandbox's processes when the grader runs as an ordinary user; the
    kernel does not apply it to a user namespace owned by root, so there (and wherever it
    can) the grader also puts each kernel in its own cgroup with ``pids.max`` (cgroup v1's
    pids hierarchy, or a v2 subtree with the pids controller). The kernel is started through
    ``sh -c 'echo $$ > <cgroup>/cgroup.procs && exec "$@"'``, so it and everything it starts
    are counted from the first instruction.
    """

    _base: Path | None | bool = False  # False: not probed yet
    CONTROLLER = "pids"
    LIMIT_FILES = ("pids.max", "pids.max")  # (cgroup v1, cgroup v2)
    PROBE_LIMIT = "8"

    @classmethod
    def base(cls) -> Path | None:
        if cls._base is False:
            cls._base = cls._probe()
        return cls._base  # type: ignore[return-value]

    @staticmethod
    def _own(hierarchy: str) -> str | None:
        try:
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, path = line.split(":", 2)
                if (hierarchy == "" and controllers == "") or hierarchy in controllers.split(","):
                    return path
        except OSError:
            pass
        return None

    @classmethod
    def _probe(cls) -> Path | None:
        candidates = []
        v1 = cls._own(cls.CONTROLLER)
        if v1 is not None:
            candidates.append((Path("/sys/fs/cgroup") / cls.CONTROLLER / v1.lstrip("/"), cls.LIMIT_FILES[0]))
        v2 = cls._own("")
        if v2 is not None and cls.CONTROLLER in _read(Path("/sys/fs/cgroup/cgroup.controllers")).split():
            candidates.append((Path("/sys/fs/cgroup") / v2.lstrip("/"), cls.LIMIT_FILES[1]))
        for base, limit_file in candidates:
            test = base / f"l13-probe-{os.getpid()}"
            try:
                test.mkdir()
                try:
                    (test / limit_file).write_text(cls.PROBE_LIMIT)
                finally:
                    test.rmdir()
                cls._limit_file = limit_file
                return base
            except OSError:
                continue
        return None

    @classmethod
    def create(cls, name: str, limit: int) -> Path | None:
        base = cls.base()
        if base is None or limit <= 0:
            return None
        group = base / name
        try:
            group.mkdir(exist_ok=True)
            (group / cls._limit_file).write_text(str(limit))
        except OSError:
            return None
        return group

    @staticmethod
    def wrap(group: Path | None, cmd: list[str]) -> list[str]:
        if group is None:
            return cmd
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *cmd]

    @staticmethod
    def remove(group: Path | None) -> None:
        """Kill what is left in the cgroup and remove it (nothing to do when it is gone)."""
        if group is None or not group.is_dir():
            return
        import signal
        import time

        for _ in range(50):
            pids = [int(p) for p in _read(group / "cgroup.procs").split()]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                group.rmdir()
                return
            except OSError:
                time.sleep(0.1)


class MemoryCgroup(PidsCgroup):
    """A memory-limited cgroup per kernel, where this machine lets the grader make one.

    RLIMIT_AS bounds each process of the sandbox, not their sum: a cell that starts a few
    fresh Pythons of almost the limit each would use several times it. Where it can (cgroup
    v1's memory hierarchy, ``memory.limit_in_bytes``, or v2's ``memory.max``) the grader puts
    the kernel and all it starts in one group whose memory, its tmpfs home included, is
    bounded as a whole; the kernel is killed when it needs more.
    """

    _base: Path | None | bool = False
    CONTROLLER = "memory"
    LIMIT_FILES = ("memory.limit_in_bytes", "memory.max")
    PROBE_LIMIT = str(1 << 30)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
