"""The revisions, oldest first: r1_schema_v1, r2_schema_v2, r3_saved_slices."""
