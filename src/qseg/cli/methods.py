"""``qseg methods``: every segmentation method with its parameters, and the shipped models."""

from __future__ import annotations

import argparse
from typing import IO


def configure(methods: argparse.ArgumentParser) -> None:
    methods.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.models import shipped_names
    from qseg.segmenters.registry import METHODS

    for method in METHODS.values():
        trains = " [trained first: qseg train --method SPEC --out MODEL]" if method.trains else ""
        out.write(f"{method.name}: {method.summary}{trains}\n    needs: {method.needs}\n")
        for key, param in method.params.items():
            choices = f"; one of {', '.join(map(str, param.choices))}" if param.choices else ""
            out.write(
                f"    {key}={param.default!r} ({param.kind.__name__}{choices}): {param.help}\n"
            )
    out.write("a saved model: the path of a file written by `qseg train`\n")
    names = shipped_names()
    out.write(f"shipped models: {', '.join(names) if names else 'none yet'}\n")
