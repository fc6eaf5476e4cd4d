# Compiled build only (setup.py, docs/build.md): the users' places with the market's state, the places,
# the level and the orders typed (read as struct fields).
cimport cython

from cefisim.engine.levels cimport Level
from cefisim.engine.recorded.depth cimport MarketState, QueuePos
from cefisim.engine.records cimport Order

@cython.locals(pos=QueuePos, depth=Order)
cpdef place_of(MarketState m, Level level, Order order)

@cython.locals(order=Order, pos=QueuePos)
cpdef move_on_depth(MarketState m, Level level, prev, new)
