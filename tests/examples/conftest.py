"""The example paper plugin in examples/erm_perturbation is importable without installing it."""

import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "erm_perturbation" / "src"
if str(SOURCE) not in sys.path:
    sys.path.insert(0, str(SOURCE))
