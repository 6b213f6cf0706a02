"""The what-if path: from a snapshot to a recommendation (and the change that enacts it)."""
