"""Evaluation on benchmark question sets (MetaQA)."""
