"""Finding a test's processes by the data directory they were given, to prove none is left behind."""

from __future__ import annotations

from pathlib import Path


def processes_using(data_dir: Path) -> dict[int, str]:
    """pid → command line of every live process whose environment or command line names ``data_dir``."""
    marker = str(data_dir).encode()
    found: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue  # a zombie has exited; only its parent's bookkeeping remains
        if marker in cmdline or b"VIDEOGEN_DATA_DIR=" + marker + b"\x00" in environ:
            found[int(proc.name)] = cmdline.replace(b"\x00", b" ").decode(errors="replace")
    return found
