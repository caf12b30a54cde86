"""movers' version, in a module of its own: the reports and the command line name it without importing the
package's lazy re-exports (``movers/__init__.py``), which would make every module that reports it part of an
import cycle through the checker."""

__version__ = "0.1.0"
