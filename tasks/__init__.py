"""The six benchmark tasks (ITP, RPP, STP, SSP, ER, VP): instances, their
builders per task profile, and metrics, built from a frozen release (see docs/tasks.md)."""
