"""Models shipped inside the package, addressable by name like a method.

They lie in the package folder ``qseg/models/shipped`` as ``NAME.qseg``, each with a metadata
file ``NAME.json`` beside it (what it was trained on, the script and seed that made it, its
figures, the licences of what it carries); ``aliases.json`` maps names such as ``default`` to
a versioned model name, so an old name keeps working after a new default ships.
"""

from __future__ import annotations

import json
from pathlib import Path

from qseg.errors import QsegError

SHIPPED = Path(__file__).with_name("shipped")


def _aliases(folder: Path) -> dict[str, str]:
    path = folder / "aliases.json"
    if not path.is_file():
        return {}
    try:
        aliases = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QsegError(f"{path}: unreadable list of shipped model names ({exc})") from None
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise QsegError(f"{path}: expected an object of name -> model name")
    return aliases


def shipped_names(folder: Path = SHIPPED) -> list[str]:
    """The names that address a shipped model: each model's own and the aliases."""
    own = sorted(p.stem for p in folder.glob("*.qseg")) if folder.is_dir() else []
    return own + sorted(_aliases(folder))


def shipped_model(name: str, folder: Path = SHIPPED) -> Path | None:
    """The file of the shipped model ``name`` (or alias; the file may be missing if an alias
    names it), or ``None`` if there is no such model."""
    if not folder.is_dir() or "/" in name or name.startswith("."):
        return None
    aliases = _aliases(folder)
    path = folder / f"{aliases.get(name, name)}.qseg"
    return path if name in aliases or path.is_file() else None


REBUILD = (
    "reinstall qseg (pip install --force-reinstall qseg), or retrain it with "
    "scripts/train_default.py"
)
"""How a damaged or missing shipped model is made whole again."""
