"""The version of movers, in one place (the package, the reports and `movers --version` read it)."""

VERSION = "0.1.0"
