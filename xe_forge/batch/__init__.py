"""Many problems at once: a process per problem, one worker per GPU, a resumable store, fast_p reports."""
