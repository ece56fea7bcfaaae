"""xe-forge: take a correct Triton kernel, return a faster one, verified against its PyTorch reference."""

__version__ = "0.1.0"
