"""Development tools that regenerate shipped data (classifier heads, the default target); not part of the wheel."""
