"""The six benchmark tasks (ITP, RPP, STP, SSP, ER, VP): instance builders,
splits and metrics, built from a frozen release (see spec/TASKS.md)."""
