"""The backend's controller options as the served resources make them, for a part that must not
wait on API discovery (pod admission).

:func:`karta.render.backends.controller_options` is a function of the resources the API server
serves (the Workload API version of the served ``Workload``); the gang reconciler calls it on every
read of the types. :class:`ServedOptions` keeps its value for the pod webhook, which runs on every
replica: read once when the part starts, then again every ``interval`` seconds in the background
(the Workload API version changes only when the API server is restarted with other flags), so an
admission request reads a cached value. Only a request that comes before the first read has
completed waits for it (one read, shared by the requests that come meanwhile); when that read
fails, the request renders with the options for no served resource and the next request tries
again. Discovery is read through a client of its own (``client`` should be a fork): invalidating
its cache never makes an admission request's own lookups wait for a discovery read.
"""

from __future__ import annotations

import threading

from karta.controller.runtime.logs import logger
from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.render.backends import BackendOptions, controller_options

__all__ = ["INTERVAL_S", "ServedOptions"]

INTERVAL_S = 30.0
_LOG = logger("served-options")


class ServedOptions:
    """A manager part (every replica); :meth:`current` is the options to render with now."""

    name = "served-options"

    def __init__(
        self,
        client: KubeClient,
        backend: str,
        *,
        scheduler_name: str | None = None,
        interval: float = INTERVAL_S,
    ) -> None:
        self.client = client
        self.backend = backend
        self.scheduler_name = scheduler_name
        self.interval = interval
        self.ready = threading.Event()  # read from discovery at least once
        self._options: BackendOptions | None = None
        self._first = threading.Lock()

    def refresh(self) -> BackendOptions:
        """Read discovery again and keep the options it gives (ClusterError when it cannot)."""
        self.client.discovery.invalidate()
        resources = self.client.discovery.resources()
        options = controller_options(self.backend, resources, scheduler_name=self.scheduler_name)
        if options != self._options:
            _LOG.info(
                "backend options from discovery", extra={"backend": self.backend, "options": repr(options)}
            )
        self._options = options
        self.ready.set()
        return options

    def current(self) -> BackendOptions:
        """The options of the last discovery read (the first time, the read itself)."""
        options = self._options
        if options is not None:
            return options
        with self._first:
            if self._options is not None:
                return self._options
            try:
                return self.refresh()
            except ClusterError as exc:
                _LOG.warning("cannot read the served resources", extra={"error": str(exc)})
                return controller_options(self.backend, scheduler_name=self.scheduler_name)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                if self._options is None:
                    self.current()
                else:
                    self.refresh()
            except ClusterError as exc:
                _LOG.warning(
                    "cannot read the served resources; keeping the options", extra={"error": str(exc)}
                )
            stop.wait(self.interval)
