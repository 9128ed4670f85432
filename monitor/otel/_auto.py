"""Zero-code installation under ``opentelemetry-instrument``: a configurator and a post-instrumentation hook.

``opentelemetry-instrument`` (package ``opentelemetry-instrumentation``) loads, in order, one distro
(entry point group ``opentelemetry_distro``, chosen by ``OTEL_PYTHON_DISTRO``), one configurator (group
``opentelemetry_configurator``, chosen by ``OTEL_PYTHON_CONFIGURATOR``; without it, the first one found), the
instrumentors, and then every ``opentelemetry_post_instrument`` hook. trifecta-monitor registers:

- the configurator ``trifecta`` (:class:`TrifectaConfigurator`): the SDK's standard configuration (the same
  as ``opentelemetry-distro``'s configurator: tracer, meter and logger providers and the exporters named by
  ``OTEL_*_EXPORTER``), then the processor, when ``OTEL_PYTHON_CONFIGURATOR=trifecta`` selects it or
  ``TRIFECTA_ENABLED=true``;
- the post-instrumentation hook ``trifecta`` (:func:`install_after_instrumentation`): with
  ``TRIFECTA_ENABLED=true``, the processor is added to the tracer provider whichever configurator set it up
  (``opentelemetry-distro``'s, a vendor's), unless the configurator already added it.

Either way the processor is added to the global tracer provider beside the exporters already there, and its
alerts go to the global logger provider, so ``OTEL_LOGS_EXPORTER`` decides where they are exported. Nothing
here raises into the application: a problem is logged, and the processor is not installed.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk._configuration import _OTelSDKConfigurator

from monitor.otel._flags import ENV_ENABLED, read_flag

if TYPE_CHECKING:  # this module runs in every instrumented program: the processor is imported when wanted
    from monitor.otel._processor import TrifectaSpanProcessor

logger = logging.getLogger("monitor.otel")

CONFIGURATOR_NAME = "trifecta"
"""The name of the configurator entry point (``OTEL_PYTHON_CONFIGURATOR=trifecta`` selects it)."""
_CONFIGURATOR_VARIABLE = "OTEL_PYTHON_CONFIGURATOR"

_lock = threading.Lock()
_attempts: list[TrifectaSpanProcessor | None] = []  # at most one: what the first hook to try installed


def install_once() -> TrifectaSpanProcessor | None:
    """Install the processor from the environment unless a hook of this process already tried (never raises):
    the environment is the same for both hooks, so a failure is logged once."""
    with _lock:
        if _attempts:
            return _attempts[0]
        from monitor.otel._env import install_processor  # the processor is imported only when it is wanted

        processor = install_processor()
        _attempts.append(processor)
        return processor


def _enabled(selected: bool) -> bool:
    """Whether the hooks install the processor: ``TRIFECTA_ENABLED`` when set, else whether our configurator
    was selected by name. An unreadable value is logged and counts as off."""
    try:
        return read_flag(os.environ, ENV_ENABLED, selected)
    except ValueError as error:
        from monitor.otel._env import report_not_installed

        report_not_installed(str(error))
        return False


class TrifectaConfigurator(_OTelSDKConfigurator):
    """The SDK's standard configuration, then the trifecta span processor (when selected or enabled)."""

    def _configure(self, **kwargs: Any) -> None:
        super()._configure(**kwargs)  # type: ignore[no-untyped-call]  # the SDK's method is not annotated
        try:
            selected = os.environ.get(_CONFIGURATOR_VARIABLE, "").strip() == CONFIGURATOR_NAME
            if _enabled(selected):
                install_once()
        except Exception:
            logger.exception("trifecta-monitor: not installed")


def install_after_instrumentation() -> None:
    """The ``opentelemetry_post_instrument`` hook: install the processor when ``TRIFECTA_ENABLED=true``
    (never raises)."""
    try:
        if _enabled(False):
            install_once()
    except Exception:
        logger.exception("trifecta-monitor: not installed")
