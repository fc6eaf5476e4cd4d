"""The running simulation: one venue and its scenario, the journal file, snapshots, replay."""
