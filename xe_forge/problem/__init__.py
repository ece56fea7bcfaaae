"""A kernel file, its reference and its spec: reading them (parent), building inputs (worker), roofline."""
