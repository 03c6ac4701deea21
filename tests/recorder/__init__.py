"""The recorder (issue 24, item 3): drives real flows against real operators on kwok Nodes and
writes, at every settled state, the sanitized object, the state judged from the operator's own
fields (``judges/<operator>.py``, written from the operator's documentation and source, never
from karta) and karta's full reading (the ``kli inspect -o json`` report) as fixtures under
``tests/recorded/<operator>/<version>/<definition>/<flow>/NN-<label>.json``.

- ``python -m tests.recorder --operator kube|training|kuberay [--kind K] [--flow F]`` records
  against ``$KUBECONFIG`` (a cluster from ``hack/cluster/up.sh --kwok --operators ...``);
  ``hack/record.sh`` starts that cluster, records and stops it.
- ``python -m tests.recorder.regenerate`` recomputes karta's reading of every fixture offline
  (after a reviewed change of reading); ``python -m tests.recorder.agreement`` prints, per kind,
  how often karta's primary status equals the judged state.
- ``tests/unit/recorder/test_replay.py`` replays every fixture offline.

An operator is a module pair: ``flows/<operator>.py`` (``FLOWS``: kind -> flow name -> function
over a :class:`~tests.recorder.session.Session`) and ``judges/<operator>.py`` (``JUDGES``: kind ->
function of the object -> :class:`~tests.recorder.judges.Judged`); its version is in
:data:`tests.recorder.registry.OPERATORS`.
"""
