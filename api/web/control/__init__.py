"""The emulator's control plane under ``/_sim/``: time, faults, snapshots, the live stream and page."""
