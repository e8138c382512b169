"""Runnable examples of the relayish Python frontend."""
