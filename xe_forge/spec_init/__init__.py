"""`xe-forge spec init`: a working spec written from the kernel itself and checked with it (above verify: it runs the Evaluator)."""
