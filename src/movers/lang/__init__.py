"""The model language: the front end that compiles a model file, and the runtime shim that lets
``from movers.lang import *`` models run under plain CPython threads (``movers.lang.runtime``)."""

from movers.lang.runtime import *  # noqa: F401,F403
from movers.lang.runtime import __all__  # noqa: F401
