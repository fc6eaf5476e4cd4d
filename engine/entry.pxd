# Compiled build only (setup.py, docs/build.md): order entry with the new order and its account typed.
cimport cython

from cefisim.engine.core cimport Result, VenueCore

from cefisim.engine.records cimport Account, Order

@cython.locals(account=Account, order=Order)
cpdef place(VenueCore v, cmd, Result result)
