"""Incremental refresh: apply a change set or a snapshot and recompute only what it reaches
(`job.run_refresh`); `status` says what each derived table reflects."""
