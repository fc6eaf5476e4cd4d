# Compiled build only (setup.py, docs/build.md): the recorded market's fills with its state, the book, the
# levels and the orders typed, and the venue's fill and the users' places as direct C calls.
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.levels cimport Level, SortedLevels, level_at, level_of
from cefisim.engine.core cimport VenueCore
from cefisim.engine.matching cimport end_order, fill
from cefisim.engine.recorded.depth cimport MarketState, QueuePos
from cefisim.engine.recorded.queue cimport place_of
from cefisim.engine.records cimport Account, Order

@cython.locals(book=Book, cp=Account, level=Level, order=Order, pos=QueuePos)
cpdef trade(MarketState m, side, price, lots, list events)

@cython.locals(v=VenueCore, cp=Account, order=Order)
cpdef aggressor(MarketState m, side, price, lots)

cpdef fill_user(MarketState m, Order order, Level level, side, price, lots, list events)

cpdef trade_against(MarketState m, Order taker, Order order, Level level, lots, list events)

@cython.locals(order=Order)
cpdef _first_user(Level level, Account cp)

@cython.locals(book=Book, bid_level=Level, ask_level=Level, bid_depth=Order, ask_depth=Order, cp=Account)
@cython.locals(taker=Order, order=Order, level=Level, depth_level=Level, users_ask=Order, users_bid=Order)
cpdef uncross(MarketState m, list events)
