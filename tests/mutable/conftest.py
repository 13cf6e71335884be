"""tests/mutable's shared test helpers (pytorch_port.py) import by name, however pytest runs."""
import pathlib
import sys

_HERE = str(pathlib.Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.append(_HERE)
