"""Loopback servers that speak the providers' wire protocols, and helpers to drive backends."""
