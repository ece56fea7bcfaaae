"""The pipeline as a LangGraph state machine: baseline, analyze, plan, a node per stages/*.yaml, final_verify, report.

Routers only choose the next node; the nodes live in nodes.py, the state in state.py.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from xe_forge.pipeline.nodes import (
    analyze_node,
    baseline_node,
    final_verify_node,
    make_stage_node,
    plan_node,
    report_node,
)
from xe_forge.pipeline.state import ForgeState, RunContext
from xe_forge.stages import stage_names


def next_stage(state: ForgeState) -> str:
    """After plan and after every stage: the first planned stage not done yet, else (or once the run was
    stopped: the budget is spent) final_verify."""
    if state.stopped:
        return "final_verify"
    done = set(state.done)
    for name in state.plan:
        if name not in done:
            return f"stage_{name}"
    return "final_verify"


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    graph = StateGraph(ForgeState, context_schema=RunContext)
    graph.add_node("baseline", baseline_node)
    graph.add_node("analyze", analyze_node)
    graph.add_node("plan", plan_node)
    names = stage_names()
    stage_targets = [f"stage_{n}" for n in names]
    for name in names:
        graph.add_node(f"stage_{name}", make_stage_node(name))
    graph.add_node("final_verify", final_verify_node)
    graph.add_node("report", report_node)
    graph.add_edge(START, "baseline")
    graph.add_edge("baseline", "analyze")
    graph.add_edge("analyze", "plan")
    graph.add_conditional_edges("plan", next_stage, stage_targets + ["final_verify"])
    for name in names:
        graph.add_conditional_edges(f"stage_{name}", next_stage, stage_targets + ["final_verify"])
    graph.add_edge("final_verify", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)
