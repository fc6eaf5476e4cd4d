"""State kept beside the engine and journaled with it: the journaled side-states (``side_states``) and the venue's own
faults (``venue_faults``)."""
