"""Examples shipped with cefisim, runnable from any folder with ``python -m cefisim.examples.NAME``."""
