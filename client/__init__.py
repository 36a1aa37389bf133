"""Plyhall client package."""
