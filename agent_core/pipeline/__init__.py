"""The LangGraph pipeline: state, nodes, routers and the graph that wires them."""
