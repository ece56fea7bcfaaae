"""Why a candidate is slow: hardware counters, the limiter, and feedback for the next candidate.

    collect.profile_source   run the candidate under ncu (NVIDIA) or VTune (Intel) -> ProfileRecord
    limiter.diagnose         ProfileRecord + the problem's FLOPs/bytes -> Diagnosis (limiter, roofline)
    feedback                 Diagnosis -> prompt text and rules-engine preferences (stages/profile/limiters.yaml)
    session                  ProfileSession (RunContext.profiler) and the hooks `optimize --profile` calls
    report                   the run report's profile section (ProfileSummary -> Markdown, roofline PNG)

A machine whose profiler cannot read counters yields a record with `unavailable` set, never an error.
"""

from xe_forge.profile.models import Diagnosis, KernelRecord, ProfileRecord, RooflinePoint

__all__ = ["Diagnosis", "KernelRecord", "ProfileRecord", "RooflinePoint"]
