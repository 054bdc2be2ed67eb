"""The event log (source of truth), its blobs, and the projections that read it."""
