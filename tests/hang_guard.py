"""The wall-clock bound of the tests that prove an input cannot make karta hang.

Those tests feed limit-sized or hostile inputs (65,536-character expressions, million-item lists,
deep chains, alias bombs) and check that the work stays bounded. Their bound is a hang guard, not a
speed target: it is far above what the work takes on a loaded CI machine (a second or two) and far
below what quadratic or unbounded work would take (minutes to hours). How fast that work is, is
measured on demand in ``bench/limits.py``, as ratios against baselines of the same run.
"""

HANG_GUARD_S = 30.0
