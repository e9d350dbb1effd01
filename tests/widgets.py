"""Finding and driving the page's widgets in AppTest: the one place tests name them; and
:func:`ok`, a run that ended without an exception or the app's last-resort error.

Most widgets are found by their key (the setting they carry). Two show a value derived from the
settings, and their keys name that value (posviz_app.state.derived_key): the example menu and
the seed box are found by their label. Lecture mode's navigation is a component: ``press``
sends what its JavaScript sends for a press of Next or Back.
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.elements.lib.utils import user_key_from_element_id
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

NAV = "posviz_nav"  # the component lecture mode's navigation is registered as
EXAMPLE_LABEL = "Example"
SEED_LABEL = "Seed for torch.manual_seed"


def ok(at: AppTest) -> AppTest:
    """No exception element and no error from the app's last-resort handler."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _labelled(widgets: Any, label: str) -> Any:
    found = [widget for widget in widgets if widget.label == label]
    assert len(found) == 1, f"{len(found)} widgets labelled {label!r}"
    return found[0]


def example_menu(at: AppTest) -> Any:
    """The example menu (a selectbox)."""
    return _labelled(at.selectbox, EXAMPLE_LABEL)


def seed_box(at: AppTest) -> Any:
    """The seed box (a text input)."""
    return _labelled(at.text_input, SEED_LABEL)


def has_seed_box(at: AppTest) -> bool:
    """Whether the page shows the seed box (lecture mode hides it)."""
    return any(widget.label == SEED_LABEL for widget in at.text_input)


def nav(at: AppTest) -> dict[str, Any] | None:
    """What lecture mode's navigation was sent in the last run ({step, count, title}), or
    ``None`` when the page shows none."""
    for element in at.get("bidi_component"):
        if element.proto.component_name == NAV:
            data: dict[str, Any] = json.loads(element.proto.json)
            return data
    return None


def slide_title(at: AppTest) -> str:
    """The title of the slide on screen."""
    data = nav(at)
    assert data is not None, "lecture mode's navigation is not on the page"
    return str(data["title"])


def press(at: AppTest, delta: int) -> AppTest:
    """Rerun ``at`` as the browser does when Next (``delta`` 1) or Back (-1) is pressed once:
    the component asks for the slide shown + ``delta``. Uses AppTest's internal tree and run:
    AppTest has no public way to set a component's state."""
    data = nav(at)
    assert data is not None, "lecture mode's navigation is not on the page"
    (element,) = [e for e in at.get("bidi_component") if e.proto.component_name == NAV]
    target = min(max(int(data["step"]) + delta, 0), int(data["count"]) - 1)
    states = at._tree.get_widget_states()
    value = {"target": {"step": target, "seq": int(data["seq"]) + 1}}  # as nav.js counts
    states.widgets.append(WidgetState(id=element.proto.id, json_value=json.dumps(value)))
    assert user_key_from_element_id(element.proto.id) == "lecture_nav"
    return at._run(states)
