"""The admission webhook server (:mod:`.server`) and the answers it gives (:mod:`.review`)."""
