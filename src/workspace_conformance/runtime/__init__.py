"""What keeps a run safe and bounded: the watchdog, the session hooks, the emergency exit, signals, leftovers."""
