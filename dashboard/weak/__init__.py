"""The Weak slices page: where a run is weak, tested with documents as the unit (scoring.slices)."""
