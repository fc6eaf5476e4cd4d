"""The files cefisim reads and writes, none of which needs a running simulation: scenario files (``scenario``)
and recorded market data (``recorded``)."""
