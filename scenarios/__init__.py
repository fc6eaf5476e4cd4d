"""The scenario files shipped with cefisim, installed as package data of ``cefisim.scenarios``.

Read them with ``importlib.resources.files("cefisim.scenarios")``; ``cefisim scenarios`` lists them
and ``cefisim serve --scenario NAME`` serves one by its name (``demo`` is ``demo.json``).
"""
