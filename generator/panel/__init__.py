"""Agents that answer a season from the served bytes and have their submissions scored (the panel of
check-season)."""
