"""State kept beside the engine and journaled with it: the journaled side-states (``sides``) and the venue's own
faults (``venue_faults``)."""
