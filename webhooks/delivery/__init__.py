"""Sending one signed POST to a webhook: signing, the guarded transport, and the delivery engine."""
