# Compiled build only (setup.py, docs/build.md): the depth events built by a direct C call
# (engine/events.pxd says why).
from cefisim.engine.events cimport build_event
