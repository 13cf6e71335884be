"""``funcgrad explain SCRIPT.py``: run a PyTorch-style script on funcgrad.mutable (``import
torch`` and its submodules mapped for the run) and explain what its autograd did: on an
error, which op saved the tensor and which op wrote it, where, the versions, the graph with
the broken edge and the functional rewrite; on success, the graph and the leaves' gradients.
"""
from __future__ import annotations

import builtins
import html
import importlib
import importlib.abc
import importlib.util
import linecache
import os
import sys
import traceback
import types

from .. import mutable
from ..compare import InplaceExplanation, _outermost, functional_rewrite, is_version_error
from ..viz import Graph, html_page, mutable_graph, source_listing
from .common import UsageError

__all__ = ["TorchAlias", "ScriptRun", "run_script", "Explanation", "explain_script"]


# --- import torch -> funcgrad.mutable ------------------------------------------------------
class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """While active, ``import torch`` (and ``torch.nn``, ``torch.nn.functional``,
    ``torch.optim``, ``torch.autograd``, any ``torch.X``) gives ``funcgrad.mutable`` (and
    ``funcgrad.mutable.X``). Whatever ``torch`` modules were loaded before are put back
    after, untouched."""

    def __enter__(self) -> "TorchAlias":
        self.saved = {k: sys.modules.pop(k) for k in list(sys.modules) if _is_torch(k)}
        # submodules funcgrad.mutable already holds as attributes (torch.nn.functional inside
        # a module nn.py, which is no package) are registered under their torch names; the
        # finder imports the rest on demand
        stack = [("torch", mutable)]
        seen = {id(mutable)}
        while stack:
            name, module = stack.pop()
            sys.modules[name] = module
            for attr, value in vars(module).items():
                if (isinstance(value, types.ModuleType) and not attr.startswith("_")
                        and value.__name__.startswith("funcgrad.mutable.")
                        and id(value) not in seen):
                    seen.add(id(value))
                    stack.append((f"{name}.{attr}", value))
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for k in [k for k in sys.modules if _is_torch(k)]:
            del sys.modules[k]
        sys.modules.update(self.saved)

    def find_spec(self, fullname, path=None, target=None):
        if not _is_torch(fullname):
            return None
        name = "funcgrad.mutable" + fullname[len("torch"):]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:
                raise
            raise ModuleNotFoundError(f"No module named '{fullname}': funcgrad.mutable has no "
                                      f"'{name}' yet", name=fullname) from None
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        return importlib.import_module("funcgrad.mutable" + spec.name[len("torch"):])

    def exec_module(self, module) -> None:
        pass  # already executed under its own name


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


# --- running the script --------------------------------------------------------------------
class ScriptRun:
    """What running a script left: ``path``, ``error`` (or None), ``tensors`` (name -> the
    funcgrad.mutable tensors in its globals and, on error, in the locals of its frames on the
    traceback), ``backward_root`` (the tensor ``backward()`` was called on when it failed)
    and ``error_at`` = (file, line) of the script line the error came through."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.error: BaseException | None = None
        self.tensors: dict = {}
        self.backward_root = None
        self.error_at: tuple | None = None


def run_script(path: str, argv: list | None = None) -> ScriptRun:
    """Run the script at `path` as ``__main__`` with torch mapped to funcgrad.mutable."""
    path = os.path.abspath(path)
    linecache.checkcache(path)  # the lines quoted must be the ones run, if the file changed
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, path, "exec")
    except SyntaxError as err:
        raise UsageError(f"{path}:{err.lineno}: syntax error: {err.msg}") from None
    run = ScriptRun(path)
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [path] + list(argv or [])
    sys.path.insert(0, os.path.dirname(path))
    try:
        with TorchAlias():
            try:
                exec(code, namespace)
            except SystemExit as err:
                if err.code not in (None, 0):
                    run.error = err
            except Exception as err:
                run.error = err
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
    run.tensors = {k: v for k, v in namespace.items()
                   if isinstance(v, mutable.Tensor) and not k.startswith("__")}
    if run.error is not None:
        tb = run.error.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_filename == path:
                run.error_at = (path, tb.tb_lineno)
                if frame.f_globals is not frame.f_locals:
                    for k, v in frame.f_locals.items():
                        if isinstance(v, mutable.Tensor) and k not in run.tensors:
                            run.tensors[k] = v
            if frame.f_code.co_name == "backward" and isinstance(frame.f_locals.get("self"),
                                                                 mutable.Tensor):
                run.backward_root = frame.f_locals["self"]
            tb = tb.tb_next
        if run.backward_root is not None:  # its graph is the one that failed: drawn first
            names = [k for k, t in run.tensors.items() if t is run.backward_root]
            first = names[0] if names else "<backward() on>"
            run.tensors = {first: run.backward_root,
                           **{k: t for k, t in run.tensors.items() if k != first}}
    return run


# --- what to say about it ------------------------------------------------------------------
_KNOWN = [
    ("Trying to backward through the graph a second time",
     "the first backward() freed the tensors the graph had saved; call it with "
     "retain_graph=True if you need a second pass, or rebuild the graph.",
     "grad(f) is a function: call it as often as you like, nothing is freed between calls."),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "a leaf that requires grad is where gradients accumulate; writing into it in place "
     "would lose the value the graph starts from. Write into a clone(), or do the write "
     "under torch.no_grad() (as optimizers do).",
     "a leaf is an input value: x.at[i].set(v) names a new array and the input is untouched."),
    ("does not require grad and does not have a grad_fn",
     "backward() was called on a tensor that no operation on a requires_grad tensor made: "
     "set requires_grad=True on the inputs you want gradients for.",
     "grad(f) differentiates with respect to the arguments it is given (argnums)."),
    ("grad can be implicitly created only for scalar outputs",
     "backward() without an argument needs a one-element output: reduce it (.sum(), "
     ".mean()) or pass the output's gradient, backward(gradient=...).",
     "grad needs a scalar output too; vjp takes the output's cotangent."),
]


class Explanation:
    """The report ``funcgrad explain`` prints and writes: ``run``, ``graph`` (or None),
    ``inplace`` (an `InplaceExplanation` for a version error), ``lines`` (the text)."""

    def __init__(self, run: ScriptRun) -> None:
        self.run = run
        self.inplace: InplaceExplanation | None = None
        self.graph: Graph | None = None
        err = run.error
        if err is not None and is_version_error(err):
            self.inplace = InplaceExplanation.from_error(err, run.tensors)
            self.graph = self.inplace.graph
        else:
            roots = _outermost([t for t in run.tensors.values() if t.grad_fn is not None])
            if roots:
                self.graph = mutable_graph(*roots, names=run.tensors)

    @property
    def failed(self) -> bool:
        return self.run.error is not None

    def leaves(self) -> list:
        """(name, tensor) of the script's leaf tensors that require grad."""
        return [(k, t) for k, t in self.run.tensors.items()
                if t.requires_grad and t.is_leaf and not k.startswith("<")]

    def lines(self) -> list[str]:
        run, err = self.run, self.run.error
        name = os.path.basename(run.path)
        out = []
        if err is None:
            out.append(f"{name} ran without an error on funcgrad.mutable.")
        elif self.inplace is not None:
            out.append(f"{name} failed in backward: an in-place write to a saved tensor.")
            out += self.inplace.lines()
            for number, old, new in _other_rewrites(run.path, self.inplace):
                out.append(f"  also in place, line {number}: {old}  ->  {new}")
        else:
            first = str(err).splitlines()[0] if str(err) else ""
            out.append(f"{name} failed: {type(err).__name__}: {first}")
            if run.error_at is not None:
                source = _line(*run.error_at)
                out.append(f"  at {run.error_at[0]}:{run.error_at[1]}   {source}")
                rewrite = functional_rewrite(source)
                if rewrite is not None:
                    out.append(f"  functional rewrite: {source}  ->  {rewrite.strip()}")
            for needle, why, functional in _KNOWN:
                if needle in str(err):
                    out.append(f"  why: {why}")
                    out.append(f"  the functional model cannot fail this way: {functional}")
        if self.graph is not None:
            out.append("")
            out.append("graph (output on top; ╳── marks the edge a version conflict breaks):")
            out += ["  " + line for line in self.graph.text().splitlines()]
        leaves = self.leaves()
        if leaves and err is None:
            out.append("")
            out.append("leaves' gradients:")
            for k, t in leaves:
                grad = "None" if t.grad is None else str(t.grad).replace("\n", "\n" + " " * 10)
                out.append(f"  {k}.grad = {grad}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def html(self) -> str:
        run = self.run
        name = os.path.basename(run.path)
        marks: dict = {}
        if run.error_at is not None and run.error_at[0] == run.path:
            marks[run.error_at[1]] = ("error", f"{type(run.error).__name__} raised here")
        if self.inplace is not None:
            e = self.inplace
            if e.saved_at and e.saved_at[0] == run.path:
                marks[e.saved_at[1]] = ("saved", f"{e.saved_by} saved the tensor here "
                                        f"(version {e.saved_version})")
            if e.modified_at and e.modified_at[0] == run.path:
                marks[e.modified_at[1]] = ("modified", f"{e.modified_by} wrote it in place here "
                                           f"(now version {e.current_version})")
        status = (f'<p class="error">{html.escape(name)} failed: '
                  f"{html.escape(type(run.error).__name__)}</p>" if self.failed else
                  f'<p class="ok">{html.escape(name)} ran without an error.</p>')
        parts = [status, "<h2>Explanation</h2>",
                 f"<pre>{html.escape(chr(10).join(self.lines()))}</pre>"]
        if self.graph is not None:
            parts += ["<h2>Graph</h2>", '<div class="graph">', self.graph.svg(), "</div>"]
        leaves = self.leaves()
        if leaves and not self.failed:
            rows = "".join(f"<tr><td>{html.escape(k)}</td><td><pre>{html.escape(str(t.grad))}"
                           f"</pre></td></tr>" for k, t in leaves)
            parts += ["<h2>Leaves' gradients</h2>",
                      f"<table><tr><th>leaf</th><th>.grad</th></tr>{rows}</table>"]
        parts += [f"<h2>The script: {html.escape(run.path)}</h2>", source_listing(run.path, marks)]
        return html_page(f"funcgrad explain: {name}", "\n".join(parts))


def _line(path: str, number: int) -> str:
    return linecache.getline(path, number).strip()


def _other_rewrites(path: str, inplace: InplaceExplanation) -> list:
    """Other in-place lines of the script, with their functional spelling."""
    done = {n for n, _, _ in inplace.rewrites}
    found = []
    for number, text in enumerate(linecache.getlines(path), 1):
        stripped = text.strip()
        if number in done or not stripped or stripped.startswith(("#", "def ", "class ")):
            continue
        new = functional_rewrite(text)
        if new is not None:
            found.append((number, stripped, new.strip()))
    return found


def explain_script(path: str, html_path: str | None = None, dot_path: str | None = None,
                   out=None) -> int:
    """The ``funcgrad explain`` command: 0 when the script ran, 1 when it failed."""
    out = out or sys.stdout
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    run = run_script(path)
    explanation = Explanation(run)
    out.flush()
    print("\n--- funcgrad explain ---", file=out)
    print(explanation, file=out)
    if html_path:
        with open(html_path, "w", encoding="utf-8") as f:
            f.write(explanation.html())
        print(f"\nwrote {html_path}", file=out)
    if dot_path:
        if explanation.graph is None:
            print(f"no graph to write to {dot_path}: no tensor has a grad_fn", file=out)
        else:
            with open(dot_path, "w", encoding="utf-8") as f:
                f.write(explanation.graph.dot() + "\n")
            print(f"wrote {dot_path}", file=out)
    if run.error is not None and not is_version_error(run.error) and not any(
            needle in str(run.error) for needle, _, _ in _KNOWN):
        # not an autograd error funcgrad knows: the script's own traceback, its frames only
        frames = [f for f in traceback.extract_tb(run.error.__traceback__)
                  if f.filename == run.path]
        if frames:
            print("\nthe script's traceback (its own frames):", file=out)
            print("".join(traceback.format_list(frames)).rstrip(), file=out)
    return 1 if run.error is not None else 0

