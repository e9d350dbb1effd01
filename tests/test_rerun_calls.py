"""benchmarks/rerun_calls.py: it names each message a run sends by its kind, counts the state
copies and reads Streamlit makes, and leaves Streamlit as it found it."""

from __future__ import annotations

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.state.session_state import SessionState

from benchmarks.rerun_calls import counting, message_kind


def test_a_message_is_named_by_its_kind() -> None:
    text = ForwardMsg()
    text.delta.new_element.markdown.body = "hello"
    block = ForwardMsg()
    block.delta.add_block.flex_container.SetInParent()
    page = ForwardMsg()
    page.page_info_changed.SetInParent()
    assert message_kind(text) == "delta:new_element:markdown"
    assert message_kind(block) == "delta:add_block:flex_container"
    assert message_kind(page) == "page_info_changed"


def test_state_copies_and_reads_are_counted_then_streamlit_is_restored() -> None:
    before = (
        ScriptRunner._enqueue_forward_msg,
        SessionState.__dict__["filtered_state"],
        SessionState.__getitem__,
    )
    state = SessionState()
    state["a"] = 1
    state["b"] = 2
    with counting() as counts:
        copies = [state.filtered_state for _ in range(3)]
        read = state["a"]
    assert copies == [{"a": 1, "b": 2}] * 3 and read == 1
    assert counts["call SessionState.filtered_state"] == 3
    # each copy reads every key once, and the test read one more
    assert counts["call SessionState.__getitem__"] == 3 * 2 + 1
    after = (
        ScriptRunner._enqueue_forward_msg,
        SessionState.__dict__["filtered_state"],
        SessionState.__getitem__,
    )
    assert after == before
