"""Write the SARIF 2.1.0 log of an analysis from Python: ``python sarif_report.py INPUT... OUTPUT.sarif``.

The same log as ``trifecta analyze --format sarif -o OUTPUT.sarif INPUT...``: one result per alert, located
at the line (or archive member) of the alert's call, its path as a code flow.
"""

from __future__ import annotations

import sys
from pathlib import Path

from monitor import SessionMonitor
from monitor.analysis import analyze_records
from monitor.ingest import read_inputs
from monitor.models import AnalysisSummary, SessionReport
from monitor.report import SarifWriter


def main(inputs: list[Path], output: Path) -> int:
    """Analyse ``inputs`` and write the log to ``output``; return the exit status."""
    summary = AnalysisSummary()
    alerts = 0
    with output.open("wb") as out:
        writer = SarifWriter(out)
        for item in analyze_records(read_inputs(inputs), SessionMonitor()):
            if isinstance(item, SessionReport):
                summary.add(item)
                writer.write_session(item)
                alerts += len(item.alerts)
            else:
                print(f"error: {item.source}: {item.message}", file=sys.stderr)
                writer.write_error(item)
        writer.close(summary)
    print(f"{alerts} alerts in {summary.sessions} sessions written to {output}")
    return 0


if __name__ == "__main__":
    *paths, target = sys.argv[1:]
    sys.exit(main([Path(p) for p in paths], Path(target)))
