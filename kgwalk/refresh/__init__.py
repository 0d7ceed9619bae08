"""Incremental refresh from Python (`job.run_refresh`; the per-table updates are declared with
their stages in kgwalk.stages) and `status`: what each derived table reflects."""
