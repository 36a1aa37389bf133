"""Compiled engines for the ``master`` levels: one shared search (``search``) and a module per game."""
