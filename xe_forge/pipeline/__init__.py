"""The optimization pipeline: LangGraph state and nodes, CoVeR per stage, analysis, reports, progress."""
