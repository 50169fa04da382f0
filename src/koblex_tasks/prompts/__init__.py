"""Prompts are versioned text files (`<family>/<name>.<version>.txt`) rendered with `string.Template`.

Their SHA-256 goes into sample/score metadata, so a log says exactly which wording produced it. Change a prompt
by adding a new version file, never by editing one that logs already refer to.

Methods that send the same wording share one file (`SHARED`: ProbTree and BeamAggr build the same question
tree, IRCoT and FLARE take the same reasoning step, ParSeR and SP+OR answer under the same system prompt); a
log still names the prompt its method asked for, with the shared file's hash.
"""

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template


@dataclass(frozen=True)
class Prompt:
    name: str  # e.g. "koblex/parser_select"
    version: str  # e.g. "v1"
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def ref(self) -> dict[str, str]:
        """What goes into the log: name, version and hash."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256}

    def render(self, **values: str) -> str:
        """Substitute `$name` placeholders; a missing value is an error, not a silent `$name` left in the text."""
        return Template(self.text).substitute(**values)


# A method's prompt name -> the shared prompt file it reads (same version numbering).
SHARED: dict[str, str] = {
    **{
        f"koblex/{method}_{stage}": f"koblex/tree_{stage}"
        for method in ("probtree", "beamaggr")
        for stage in ("cb", "cb_system", "ob", "ob_system")
    },
    "koblex/probtree_tree": "koblex/tree",
    "koblex/beamaggr_tree": "koblex/tree",
    "koblex/ircot_step": "koblex/interleaved_step",
    "koblex/flare_step": "koblex/interleaved_step",
    "koblex/sp_or_system": "koblex/answer_with_provisions_system",
    "koblex/parser_answer_system": "koblex/answer_with_provisions_system",
}


@cache
def load_prompt(name: str, version: str = "v1") -> Prompt:
    family, _, stem = SHARED.get(name, name).rpartition("/")
    package = "koblex_tasks.prompts" + (f".{family.replace('/', '.')}" if family else "")
    try:
        text = resources.files(package).joinpath(f"{stem}.{version}.txt").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise ValueError(f"no prompt {name!r} version {version!r}") from exc
    return Prompt(name=name, version=version, text=text)
