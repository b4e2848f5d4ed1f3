"""Upstream MassGen's custom-tool result types, so its tool files (``custom_tools``) import unchanged."""
