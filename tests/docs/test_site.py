"""The documentation site: it builds with `mkdocs build --strict`, and its code runs.

Every ```python block of the hand-written pages below runs, page by page in one namespace,
so the pages cannot drift from the code. A block that shows a failure is preceded by
``<!-- raises: ErrorClass -->`` and must raise exactly that.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["index.md", "two_models.md", "mutation_policies.md", "explain.md",
         "coming_from_pytorch.md", "coming_from_jax.md", "coming_from_autograd.md"]
BLOCK = re.compile(r"(?:<!-- raises: (\w+) -->\n)?```python\n(.*?)```", re.S)


@pytest.mark.parametrize("page", PAGES)
def test_code_blocks_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall((ROOT / "docs" / page).read_text())
    namespace: dict = {"__name__": "__docs__"}
    for raises, code in blocks:
        if raises:
            with pytest.raises(Exception) as caught:
                exec(compile(code, page, "exec"), namespace)
            assert type(caught.value).__name__ == raises
        else:
            exec(compile(code, page, "exec"), namespace)


def test_two_models_page_claims() -> None:
    """The page's first example is a real comparison; its numbers agree."""
    import numpy as np

    import funcgrad as fg
    import funcgrad.mutable as torch
    import funcgrad.numpy as fnp

    x = np.ones((5, 3)) * 0.2
    y = np.zeros(5)
    g = fg.grad(lambda w: fnp.mean((fnp.tanh(x @ w) - y) ** 2))(np.ones(3))
    w = torch.ones(3, dtype=torch.float64, requires_grad=True)
    ((torch.tanh(torch.tensor(x) @ w) - torch.tensor(y)) ** 2).mean().backward()
    assert np.allclose(np.asarray(g), w.grad.numpy(), rtol=1e-14)


@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings")),
                    reason="the docs extra (mkdocs-material, mkdocstrings) is not installed: "
                           "pip install -e '.[docs]'")
def test_site_builds_strict(tmp_path: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    covered = (tmp_path / "site" / "mutable" / "index.html").read_text()
    assert "torch.Tensor" in covered and "register_hook" in covered   # the generated table
    reference = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "value_and_grad" in reference and "has_aux" in reference   # mkdocstrings ran
