"""``kli``: the command-line interface. The only layer that imports click."""
