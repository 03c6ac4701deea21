"""The Karta operator (:mod:`.operator`: conditions, index labels, events) and the Karta admission
webhooks (:mod:`.webhooks`), which share its validation text."""
