"""Flows per operator: ``<operator>.py`` holds ``FLOWS`` (kind -> flow name -> ``flow(session)``)."""
