"""The ``funcgrad`` command (also ``python -m funcgrad``): ``demo``, ``explain``, ``tape``.

Exit status: 0 when all went as asked; 1 when the program studied failed (``explain``: the
script raised; ``demo``: a scenario did not come out as the seeds say); 2 for a mistake on
the command line (a missing file, a bad MODULE:FUNCTION, bad shapes), reported in one line.
"""
from __future__ import annotations

import argparse
import sys

from .. import __version__
from . import demo, seeds
from .common import UsageError
from .explain import explain_script
from .tape import tape_command

__all__ = ["main", "UsageError"]

_EPILOG = ("exit status: 0 done; 1 the program studied failed (explained above); "
           "2 a mistake on the command line")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (and exit status 2), no usage dump."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="funcgrad", epilog=_EPILOG,
                     description="funcgrad: the functional and the mutable model side by side.")
    parser.add_argument("--version", action="version", version=f"funcgrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = sub.add_parser(
        "demo", epilog=_EPILOG, help="the seeds' scenarios, both models side by side",
        description="Run the seeds' scenarios (PyTorch's dynamic graph, leaf tensors, hooks, "
        "retain_graph, in-place version checks) both ways, functional (funcgrad.numpy + "
        "grad) and mutable (funcgrad.mutable as torch), in one table: values and gradients "
        "of each, where they agree, where the mutable one fails and why the functional one "
        "cannot.")
    demo.add_argument("--source", action="store_true", help="print the scenarios' code and exit")
    demo.add_argument("--width", type=int, default=None, help="table width in characters")
    explain = sub.add_parser(
        "explain", epilog=_EPILOG, help="run a PyTorch script on funcgrad.mutable and explain it",
        description="Run SCRIPT.py with `import torch` (torch.nn, torch.nn.functional, "
        "torch.optim, torch.autograd) mapped to funcgrad.mutable. On an autograd error: "
        "PyTorch's message, the op that saved the tensor and the op that wrote it in place "
        "(file:line and source), the versions, the graph with the broken edge, the "
        "functional rewrite. On success: the graph and the leaves' gradients.")
    explain.add_argument("script", metavar="SCRIPT.py", help="the script to run")
    explain.add_argument("--html", metavar="REPORT.html",
                         help="also write a self-contained HTML report (inline SVG)")
    explain.add_argument("--dot", metavar="FILE", help="also write the graph as Graphviz DOT")
    tape = sub.add_parser(
        "tape", epilog=_EPILOG, help="the tape funcgrad records for a function",
        description="Import MODULE (or path/to/file.py), call FUNCTION on random float64 "
        "inputs of the given shapes and print the tape funcgrad.make_tape records.")
    tape.add_argument("target", metavar="MODULE:FUNCTION")
    tape.add_argument("--shapes", nargs="*", default=[], metavar="SHAPE",
                      help="one shape per argument: 3, 2,3 or scalar")
    tape.add_argument("--grad", action="store_true",
                      help="record value_and_grad of the function (the backward pass too)")
    tape.add_argument("--html", metavar="FILE", help="also write the tape drawn, as HTML")
    tape.add_argument("--dot", metavar="FILE", help="also write the tape as Graphviz DOT")
    tape.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    return parser


def main(argv: list | None = None) -> int:
    """Run the command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            if args.source:
                print(seeds.SOURCE)
                return 0
            return demo.run_demo(width=args.width)
        if args.command == "explain":
            return explain_script(args.script, html_path=args.html, dot_path=args.dot)
        if args.command == "tape":
            return tape_command(args.target, args.shapes, grad=args.grad,
                                html_path=args.html, dot_path=args.dot, seed=args.seed)
        parser.print_help()
        return 2
    except UsageError as err:
        print(f"funcgrad {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # e.g. the report cannot be written
        print(f"funcgrad {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"funcgrad {args.command}: interrupted", file=sys.stderr)
        return 130
