"""Tools over the memories and the ReAct loop that uses them."""
