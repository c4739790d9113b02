"""shiftkit: the long-running agent protocol, enforced from outside the model."""

__version__ = "0.1.0"
