"""How to install an optional extra, said once for every message and the docs.

koblex-tasks is not on PyPI yet, so a hint that named the package (`pip install 'koblex-tasks[rerank]'`) would
fail for everyone: until it is published, hints say what works today, from a clone. When the package is
published, set `PUBLISHED` and every hint names it.
"""

PACKAGE = "koblex-tasks"
PUBLISHED = False  # True once `pip install koblex-tasks` resolves on PyPI
# An unpinned torch on Linux is a multi-GB CUDA build; the CPU wheels live on PyTorch's own index.
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def pip_extra(extra: str) -> str:
    """The command that installs `extra` (e.g. "rerank") as things stand."""
    if PUBLISHED:
        return f"pip install '{PACKAGE}[{extra}]'"
    return f'pip install -e ".[{extra}]" (in your clone of {PACKAGE})'
