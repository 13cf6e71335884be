"""Record what real PyTorch gives for every corpus snippet into expected.json.

Run with the oracle interpreter (torch 2.13.0 CPU), from anywhere:

    /opt/oracle/bin/python tests/mutable/record_expectations.py

Re-run it whenever a snippet is added or changed, and commit expected.json with the snippet.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPECTED_PATH = HERE / "expected.json"
TORCH_VERSION = "2.13.0"


def load_corpus():
    """The corpus package (its loader and plain-data helpers), loaded by path."""
    spec = importlib.util.spec_from_file_location("_mutable_oracle_corpus", HERE / "corpus" / "__init__.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    return corpus


def record(torch) -> dict:
    """Every snippet's plain result on ``torch``; a snippet that raises or returns non-plain data is a corpus bug."""
    corpus = load_corpus()
    results = {}
    problems = []
    for name, snippet in corpus.load_snippets().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = corpus.plain(snippet(torch, torch.nn))
            except Exception as exc:  # noqa: BLE001 - reported below, then the run fails
                problems.append(f"{name} raised {type(exc).__name__}: {exc}")
                continue
            finally:
                leaked = corpus.restore_global_modes(torch)
                if leaked:
                    problems.append(f"{name}: {', '.join(leaked)}")
        if "<not plain data" in json.dumps(result):
            problems.append(f"{name} returned data that is not plain: {result!r}")
        results[name] = result
    if problems:
        raise SystemExit("corpus bugs, nothing written:\n  " + "\n  ".join(problems))
    return results


def main() -> None:
    import torch

    if not torch.__version__.startswith(TORCH_VERSION):
        raise SystemExit(f"expected torch {TORCH_VERSION}, found {torch.__version__}: record with the oracle venv")
    results = record(torch)
    # One snippet per line, so a changed expectation shows as a one-line diff.
    lines = [f' "torch_version": {json.dumps(torch.__version__)},', ' "snippets": {']
    entries = [f"  {json.dumps(name)}: {json.dumps(result, ensure_ascii=False)}" for name, result in results.items()]
    lines.append(",\n".join(entries))
    EXPECTED_PATH.write_text("{\n" + "\n".join(lines) + "\n }\n}\n")
    print(f"recorded {len(results)} snippets from torch {torch.__version__} into {EXPECTED_PATH}")


if __name__ == "__main__":
    sys.exit(main())
