"""What the admin reads: rich renderables that also serialise to JSON, and plots."""
