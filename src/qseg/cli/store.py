"""``qseg store info|verify``: what a store holds, and whether its checksums hold."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import IO


def configure(store: argparse.ArgumentParser) -> None:
    actions = store.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser("info", help="what a store holds")
    info.add_argument("path", metavar="STORE")
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(run=run_info)
    verify = actions.add_parser("verify", help="check every section's checksum")
    verify.add_argument("path", metavar="STORE")
    verify.set_defaults(run=run_verify)


def run_info(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.resources.store import Store

    store = Store.open(args.path, verify=False)  # what it holds, even if damaged
    record = asdict(store.info) | {
        "bytes_per_key": store.info.bytes_per_key,
        "fingerprint": store.fingerprint,
    }
    if args.format == "json":
        out.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        return
    for key, value in record.items():
        out.write(f"{key}: {value}\n")


def run_verify(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.resources.store import Store

    Store.open(args.path, verify=True)
    out.write(f"{args.path}: ok\n")
