"""Test helpers for relayish: hypothesis strategies that generate IR."""
