"""``python -m funcgrad``: the funcgrad command (demo, explain, tape)."""
from funcgrad._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
