"""Checkpoint trends: a series of checkpoints per slice, and alarms on real, lasting drops (scoring.trends)."""
