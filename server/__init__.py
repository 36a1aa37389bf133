"""Plyhall server package."""
