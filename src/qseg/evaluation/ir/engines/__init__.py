"""Search engines behind the IR-based evaluation."""
