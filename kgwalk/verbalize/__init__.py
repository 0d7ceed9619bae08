"""Verbalizers turn walks into one sentence each. The template verbalizer is the default;
LLM verbalizers plug in behind the same interface."""

from kgwalk.verbalize.base import Verbalizer, make_verbalizer
from kgwalk.verbalize.template import TemplateVerbalizer, relation_phrases

__all__ = ["TemplateVerbalizer", "Verbalizer", "make_verbalizer", "relation_phrases"]
