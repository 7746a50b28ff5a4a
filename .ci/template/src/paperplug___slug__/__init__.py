"""TODO: the method in one line (paper, venue).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {"TODO": ".TODO_stage"})
