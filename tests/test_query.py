"""posviz.query: untrusted query strings give valid settings, with a notice for what was not
used; settings survive a trip through a real URL."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qs, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from posviz.config import Settings, for_weights, validate
from posviz.query import TABS, Link, query_from_settings, read_link, settings_from_query

DEFAULT = Settings()


def test_empty_query_gives_defaults() -> None:
    assert settings_from_query({}) == (DEFAULT, [])


def test_valid_values() -> None:
    settings, notices = settings_from_query(
        {
            "text": "Every effort moves you",
            "context_length": "4",
            "emb_dim": "256",
            "seed": "0",
            "stride": "2",
            "window": "3",
            "scheme": "rope",
            "lecture": "1",
        }
    )
    assert notices == []
    assert settings == Settings(
        text="Every effort moves you",
        context_length=4,
        emb_dim=256,
        seed=0,
        stride=2,
        window=3,
        scheme="rope",
    )


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        pytest.param("context_length", "1", 1, id="T-low"),
        pytest.param("context_length", "1024", 1024, id="T-high"),
        pytest.param("emb_dim", "2", 2, id="d-low"),
        pytest.param("emb_dim", "768", 768, id="d-high"),
        pytest.param("seed", "4294967295", 2**32 - 1, id="seed-high"),
        pytest.param("stride", "1024", 1024, id="stride-high"),
        pytest.param("emb_dim", " 8 ", 8, id="surrounding-spaces"),
        pytest.param("emb_dim", "008", 8, id="leading-zeros"),
    ],
)
def test_valid_numbers(key: str, raw: str, expected: int) -> None:
    settings, notices = settings_from_query({key: raw})
    assert notices == []
    assert getattr(settings, key) == expected


BAD_NUMBERS = [
    pytest.param("abc", id="word"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="spaces"),
    pytest.param("4.0", id="float"),
    pytest.param("4.5", id="fraction"),
    pytest.param("1e3", id="exponent"),
    pytest.param("nan", id="nan"),
    pytest.param("inf", id="inf"),
    pytest.param("0x10", id="hex"),
    pytest.param("1_000", id="underscore"),
    pytest.param("--5", id="double-minus"),
    pytest.param("-", id="minus-only"),
    pytest.param("5-", id="trailing-minus"),
    pytest.param("+-5", id="plus-minus"),
    pytest.param("١٢", id="arabic-indic-digits"),
    pytest.param("²", id="superscript"),
    pytest.param("9" * 30, id="30-digits"),
    pytest.param("%zz", id="broken-percent-encoding"),
    pytest.param("%E0%A4%A", id="truncated-percent-utf8"),
    pytest.param("\ufffd\ufffd", id="replacement-chars"),
    pytest.param("\x00", id="nul"),
    pytest.param("<script>alert(1)</script>", id="script"),
]


@pytest.mark.parametrize("key", ["context_length", "emb_dim", "seed", "stride", "window"])
@pytest.mark.parametrize("raw", BAD_NUMBERS)
def test_non_numbers_fall_back_with_a_notice(key: str, raw: str) -> None:
    settings, notices = settings_from_query({key: raw})
    assert settings == DEFAULT
    assert len(notices) == 1
    notice = notices[0]
    assert notice.startswith(f"{key}: ")
    assert "not a whole number" in notice
    shown_default = "auto" if key == "stride" else str(getattr(DEFAULT, key))
    assert notice.endswith(f"using {shown_default}")


@pytest.mark.parametrize(
    ("key", "raw", "low", "high"),
    [
        pytest.param("context_length", "0", 1, 1024, id="T-zero"),
        pytest.param("context_length", "1025", 1, 1024, id="T-over"),
        pytest.param("emb_dim", "1", 2, 768, id="d-one"),
        pytest.param("emb_dim", "-8", 2, 768, id="d-negative"),
        pytest.param("emb_dim", "99999999999999999999", 2, 768, id="d-20-digits"),
        pytest.param("seed", "-1", 0, 2**32 - 1, id="seed-negative"),
        pytest.param("seed", "4294967296", 0, 2**32 - 1, id="seed-over"),
        pytest.param("stride", "0", 1, 1024, id="stride-zero"),
        pytest.param("window", "-1", 0, 10_000_000, id="window-negative"),
    ],
)
def test_out_of_range_falls_back_naming_value_and_range(
    key: str, raw: str, low: int, high: int
) -> None:
    settings, notices = settings_from_query({key: raw})
    assert settings == DEFAULT
    assert len(notices) == 1
    assert notices[0].startswith(f"{key}: {int(raw)} ")
    assert f"{low}–{high}" in notices[0]


def test_repeated_keys_use_the_last_value_and_say_so() -> None:
    settings, notices = settings_from_query({"emb_dim": ["8", "16"], "seed": ["1", "x", "7"]})
    assert (settings.emb_dim, settings.seed) == (16, 7)
    assert "emb_dim: given 2 times; using the last" in notices
    assert "seed: given 3 times; using the last" in notices
    assert len(notices) == 2


def test_repeated_key_whose_last_value_is_bad() -> None:
    settings, notices = settings_from_query({"emb_dim": ["8", "x"]})
    assert settings.emb_dim == DEFAULT.emb_dim
    assert any(n.startswith("emb_dim: 'x' is not a whole number") for n in notices)


def test_empty_list_value() -> None:
    settings, notices = settings_from_query({"emb_dim": []})
    assert settings == DEFAULT
    assert notices and notices[0].startswith("emb_dim: ")


@pytest.mark.parametrize("key", ["foo", "EMB_DIM", "", "<b>x</b>", "k" * 500, "__class__"])
def test_unknown_keys_are_ignored_with_a_notice(key: str) -> None:
    settings, notices = settings_from_query({key: "1"})
    assert settings == DEFAULT
    assert notices == [f"unknown parameter {key[:40]!r} ignored"]


@pytest.mark.parametrize("raw", ["", "ROPE", "ALiBi", "xpos", "learned ", "%72ope"])
def test_bad_scheme(raw: str) -> None:
    settings, notices = settings_from_query({"scheme": raw})
    assert settings.scheme == "learned"
    assert len(notices) == 1 and notices[0].startswith("scheme: ")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("<script>alert(1)</script> **b**", id="markup"),
        pytest.param("%zz %E0%A4%A \ufffd", id="broken-percent-encoding"),
        pytest.param("\x00\ud800", id="nul-and-lone-surrogate"),
        pytest.param("a" * 25_000, id="at-the-limit"),
    ],
)
def test_text_is_taken_as_it_is(text: str) -> None:
    settings, notices = settings_from_query({"text": text})
    assert notices == []
    assert settings.text == text


def test_text_too_long_falls_back_with_a_notice() -> None:
    settings, notices = settings_from_query({"text": "a" * 25_001, "emb_dim": "8"})
    assert settings.text == DEFAULT.text
    assert settings.emb_dim == 8
    assert len(notices) == 1 and notices[0].startswith("text: ")
    assert "25,000" in notices[0]


def test_broken_percent_encoding_through_a_real_parser() -> None:
    params = parse_qs(
        "emb_dim=%zz&seed=%E0%A4%A&text=%ff%fe%41&context_length=%34", keep_blank_values=True
    )
    settings, notices = settings_from_query(params)
    assert settings.context_length == 4  # %34 is "4"
    assert settings.text == "\ufffd\ufffdA"
    assert (settings.emb_dim, settings.seed) == (DEFAULT.emb_dim, DEFAULT.seed)
    assert sorted(n.split(":")[0] for n in notices) == ["emb_dim", "seed"]


def test_base_settings_are_the_fallback() -> None:
    base = Settings(emb_dim=32, seed=5)
    settings, notices = settings_from_query({"emb_dim": "x", "context_length": "8"}, base)
    assert settings == Settings(emb_dim=32, seed=5, context_length=8)
    assert notices == ["emb_dim: 'x' is not a whole number; using 32"]


QUERY_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**25), 10**25).map(str),
    st.lists(st.text(max_size=10), max_size=3),
)


@given(
    st.dictionaries(
        st.one_of(
            st.sampled_from(
                [
                    *("text", "context_length", "emb_dim", "seed", "stride", "window"),
                    *("scheme", "compare", "causal"),
                ]
            ),
            st.text(max_size=10),
        ),
        QUERY_VALUES,
        max_size=8,
    )
)
def test_any_query_gives_valid_settings(params: dict[str, str | list[str]]) -> None:
    settings, notices = settings_from_query(params)
    assert validate(settings) == settings
    assert all(isinstance(notice, str) for notice in notices)


# --- round trips ----------------------------------------------------------------------

ROUND_TRIPS = [
    pytest.param(Settings(), id="defaults"),
    pytest.param(
        Settings(text="Every effort moves you", context_length=4, emb_dim=256, stride=4),
        id="book-2.8-like",
    ),
    pytest.param(
        Settings(
            text="a & b = c?#x %20 + é 😀 <|endoftext|>\n\t",
            context_length=1024,
            emb_dim=2,
            seed=2**32 - 1,
            stride=1,
            window=7,
            scheme="rope",
        ),
        id="url-special-characters",
    ),
    pytest.param(Settings(text="", seed=0, scheme="none"), id="empty-text-seed-0"),
    pytest.param(Settings(scheme="sinusoidal", emb_dim=5, stride=3), id="sinusoidal-odd-d"),
    pytest.param(Settings(text="x" * 2_000), id="text-at-url-limit"),
    pytest.param(
        Settings(text="The dog bites the man", compare_text="The man & the dog?", causal=True),
        id="compare-causal",
    ),
]


@pytest.mark.parametrize("settings", ROUND_TRIPS)
def test_round_trip(settings: Settings) -> None:
    assert settings_from_query(query_from_settings(settings)) == (settings, [])


@pytest.mark.parametrize("settings", ROUND_TRIPS)
def test_round_trip_through_a_real_url(settings: Settings) -> None:
    url_query = urlencode(query_from_settings(settings))
    assert settings_from_query(parse_qs(url_query, keep_blank_values=True)) == (settings, [])


def test_defaults_are_left_out() -> None:
    assert query_from_settings(Settings()) == {}
    assert query_from_settings(Settings(emb_dim=8)) == {"emb_dim": "8"}


def test_long_text_is_left_out_and_the_link_says_so() -> None:
    settings = Settings(text="y" * 2_001, emb_dim=8)
    params = query_from_settings(settings)
    assert params == {"emb_dim": "8", "text_omitted": "1"}
    assert settings_from_query(params) == (Settings(emb_dim=8), [])
    link = read_link(params)
    assert link.settings == Settings(emb_dim=8)
    assert len(link.notices) == 1 and "2,000 characters" in link.notices[0]
    assert "shows the default text instead" in link.notices[0], "it says another text is shown"
    assert query_from_settings(Settings(text="y" * 2_000)) == {"text": "y" * 2_000}


def test_lecture_flag() -> None:
    params = query_from_settings(Settings(), lecture=True)
    assert params == {"lecture": "1"}
    assert settings_from_query(params) == (Settings(), [])


@pytest.mark.parametrize("scheme", ["rope", "none", "sinusoidal"])
def test_bad_scheme_notice_names_the_scheme_kept(scheme: str) -> None:
    base = Settings(scheme=scheme)  # type: ignore[arg-type]
    settings, notices = settings_from_query({"scheme": "xpos"}, base)
    assert settings.scheme == scheme
    assert notices == [
        f"scheme: 'xpos' is not one of learned, sinusoidal, none, rope, alibi, t5; using {scheme}"
    ]


@pytest.mark.parametrize("scheme", ["alibi", "t5"])
def test_score_bias_schemes_in_links(scheme: str) -> None:
    settings, notices = settings_from_query({"scheme": scheme})
    assert (settings.scheme, notices) == (scheme, [])
    assert query_from_settings(settings) == {"scheme": scheme}


def test_attention_keys_round_trip() -> None:
    """heads=, head=, shift= (issue 25): ranges 1-12, 0-11 and 0-1024, written out here."""
    params = {"scheme": "alibi", "heads": "6", "head": "5", "shift": "8"}
    settings, notices = settings_from_query(params)
    assert (settings.heads, settings.head, settings.shift, notices) == (6, 5, 8, [])
    assert query_from_settings(settings) == params
    assert query_from_settings(Settings()) == {}  # defaults 4, 0, 0 are left out
    for key, bad in (("heads", "0"), ("heads", "13"), ("head", "12"), ("shift", "1025")):
        kept, said = settings_from_query({key: bad})
        assert kept == Settings() and len(said) == 1
        assert said[0].startswith(f"{key}: {bad} is outside")


@pytest.mark.parametrize(
    ("params", "emb_dim", "chosen"),
    [
        pytest.param({"heads": "6", "head": "5"}, 66, 1, id="6-heads: 66 (60 is further)"),
        pytest.param({"heads": "6", "scheme": "rope"}, 60, 1, id="rope: 60 = 6 x 10 (66 odd)"),
        pytest.param({"heads": "5", "emb_dim": "64"}, 64, 0, id="d named: kept"),
        pytest.param({"heads": "8"}, 64, 0, id="8 divide 64"),
        pytest.param({"heads": "7", "weights": "gpt2"}, 768, 0, id="gpt2: d is 768"),
        pytest.param({"emb_dim": "63"}, 63, 0, id="no heads named"),
    ],
)
def test_a_link_naming_heads_and_no_d_gets_a_d_they_divide(
    params: dict[str, str], emb_dim: int, chosen: int
) -> None:
    """The nearest d to the default 64 that the heads split into equal heads (RoPE: of an even
    size), worked out here by hand; a link that names d keeps it (the tab fits its heads)."""
    link = read_link(params)
    assert link.settings.emb_dim == emb_dim
    assert len(link.chosen) == chosen
    assert int(params.get("heads", "4")) == link.settings.heads  # the heads are kept as given
    if chosen:
        assert link.chosen[0].startswith(f"emb_dim: {emb_dim}, not the default 64")
        assert link.notices == ()


@pytest.mark.parametrize(
    ("raw", "lecture"),
    [("1", True), ("true", True), ("ON", True), ("0", False), ("off", False), ("False", False)],
)
def test_read_link_takes_the_lecture_flag(raw: str, lecture: bool) -> None:
    link = read_link({"lecture": raw, "emb_dim": "8"})
    assert link == Link(Settings(emb_dim=8), lecture, ())


@pytest.mark.parametrize("raw", ["yes", "2", "", "<b>", "maybe"])
@pytest.mark.parametrize("step", [None, "3"])
def test_read_link_ignores_a_bad_lecture_flag_with_a_notice(raw: str, step: str | None) -> None:
    """A value ``lecture=`` does not take names the ones it takes and leaves lecture mode off,
    with or without a step (the notice must not say "off" while a step turns it on)."""
    link = read_link({"lecture": [raw]} | ({} if step is None else {"step": step}))
    assert (link.settings, link.lecture, link.step) == (DEFAULT, False, None)
    assert link.notices == (
        f"lecture: {raw!r} is not one of 1, true, on, 0, false, off; lecture mode stays off",
    )


@pytest.mark.parametrize(
    "key", ["utm_source", "utm_medium", "UTM_Campaign", "utm_", "fbclid", "gclid", "msclkid"]
)
def test_tracking_parameters_are_ignored_without_a_word(key: str) -> None:
    link = read_link({key: "newsletter", "lecture": "1", "step": "3"})
    assert link == Link(DEFAULT, True, (), 3)


def test_parameters_that_only_look_like_tracking_are_named() -> None:
    assert read_link({"utmsource": "x"}).notices == ("unknown parameter 'utmsource' ignored",)


def test_read_link_keeps_the_settings_notices() -> None:
    link = read_link({"seed": "x", "lecture": "1"})
    assert (link.settings, link.lecture) == (DEFAULT, True)
    assert link.notices == ("seed: 'x' is not a whole number; using 123",)


def test_gpt2_links_round_trip_with_d_and_scheme_implied() -> None:
    gpt2 = for_weights(Settings(text="hi"), "gpt2")
    assert query_from_settings(gpt2) == {"text": "hi", "weights": "gpt2"}
    assert settings_from_query({"text": "hi", "weights": "gpt2"}) == (gpt2, [])
    settings, notices = settings_from_query({"weights": "gpt2", "emb_dim": "64"})
    assert settings.emb_dim == 768
    assert notices == ["emb_dim: GPT-2's trained tables have 768 columns; using 768, not 64"]


# --- compare mode ---------------------------------------------------------------------------


def test_compare_and_causal_parameters() -> None:
    settings, notices = settings_from_query({"compare": "The man bites the dog", "causal": "on"})
    assert (settings.compare_text, settings.causal, notices) == ("The man bites the dog", True, [])
    query = query_from_settings(settings)
    assert query == {"compare": "The man bites the dog", "causal": "1"}
    assert "compare_text" not in query  # the URL says compare, the field compare_text


@pytest.mark.parametrize(
    ("params", "notice"),
    [
        pytest.param(
            {"causal": "maybe"}, "causal: 'maybe' is not on/off; using False", id="causal"
        ),
        pytest.param({"compare": "x" * 25_001}, "compare: longer than 25,000", id="too-long"),
        pytest.param({"compare_text": "x"}, "unknown parameter 'compare_text'", id="field-name"),
    ],
)
def test_bad_compare_parameters_fall_back_with_a_notice(
    params: dict[str, str], notice: str
) -> None:
    settings, notices = settings_from_query(params)
    assert (settings.compare_text, settings.causal) == ("", False)
    assert len(notices) == 1 and notices[0].startswith(notice)


def test_long_second_text_is_left_out_of_the_link_and_says_so() -> None:
    params = query_from_settings(Settings(compare_text="y" * 2_001))
    assert params == {"compare_omitted": "1"}
    (notice,) = read_link(params).notices
    assert notice.startswith("compare: the link was made from a text longer than 2,000")


@pytest.mark.parametrize("step", [1, 3, 5, 9, 11, 13, 15])
def test_step_link_opens_that_lecture_step(step: int) -> None:
    params = query_from_settings(Settings(), lecture=True, step=step)
    assert params == {"lecture": "1", "step": str(step)}
    assert read_link(params) == Link(Settings(), True, (), step)
    assert read_link({"step": str(step)}).lecture, "a step link opens lecture mode"
    assert query_from_settings(Settings(), step=step) == {}, "no step outside lecture mode"


@pytest.mark.parametrize("raw", ["0", "27", "-1", "2.5", "x", "", "٣"])
def test_bad_step_starts_at_step_one_with_a_notice(raw: str) -> None:
    link = read_link({"lecture": "1", "step": raw})
    assert (link.lecture, link.step) == (True, None)
    assert link.notices == (f"step: {raw!r} is not a step from 1 to 26; using 1",)


# --- tab=: which tab a link opens -------------------------------------------------------------


@pytest.mark.parametrize("tab", TABS)
def test_a_tab_goes_into_the_link_and_comes_back(tab: str) -> None:
    params = query_from_settings(Settings(), tab=tab)
    assert params == ({} if tab == "embeddings" else {"tab": tab})  # the default is left out
    assert read_link(params).tab == (None if tab == "embeddings" else tab)


def test_the_views_of_issue_16_have_tabs() -> None:
    assert {"geometry", "distance"} <= set(TABS)
    assert read_link({"tab": "Geometry "}).tab == "geometry"  # as typed by hand


@pytest.mark.parametrize("raw", ["plots", "../geometry", "", "<script>"])
def test_an_unknown_tab_is_ignored_with_a_notice(raw: str) -> None:
    link = read_link({"tab": raw})
    assert link.tab is None
    assert link.notices == (
        f"tab: {raw.strip().lower()!r} is not one of {', '.join(TABS)}; ignored",
    )


def test_writing_an_unknown_tab_is_a_bug() -> None:
    with pytest.raises(ValueError, match="tab must be one of"):
        query_from_settings(Settings(), tab="plots")


@pytest.mark.parametrize("off", ["0", "false", "off", "OFF"])
def test_lecture_off_wins_over_a_step(off: str) -> None:
    link = read_link({"lecture": off, "step": "3"})
    assert (link.lecture, link.step) == (False, None)
    assert link.notices == (
        "step: '3' is a lecture step and lecture=0 turns lecture mode off; showing the whole page",
    )
    assert read_link({"step": "3", "lecture": "1"}) == Link(Settings(), True, (), 3)


# --- step= on the Training tab: the training step ---------------------------------------------


@pytest.mark.parametrize("step", [0, 600, 1450])
def test_on_the_training_tab_step_is_the_training_step(step: int) -> None:
    link = read_link({"tab": "training", "run": "default-init", "step": str(step)})
    expected = replace(DEFAULT, run="default-init", train_step=step)
    assert link == Link(expected, False, (), None, "training")
    written = query_from_settings(link.settings, tab="training")
    assert written == {"run": "default-init", "step": str(step), "tab": "training"}
    assert read_link(written) == link


def test_a_lecture_link_on_the_training_tab_keeps_both_steps_apart() -> None:
    """Lecture mode turned on: ``step`` is the slide, and the training step is ``train_step``."""
    link = read_link({"tab": "training", "lecture": "1", "step": "20", "train_step": "600"})
    assert (link.lecture, link.step, link.settings.train_step) == (True, 20, 600)
    written = query_from_settings(link.settings, lecture=True, step=20, tab="training")
    assert (written["step"], written["train_step"]) == ("20", "600")
    for off in ("0", "maybe"):  # lecture mode off: the Training tab's step again
        link = read_link({"tab": "training", "lecture": off, "step": "650"})
        assert (link.lecture, link.step, link.settings.train_step) == (False, None, 650)


@pytest.mark.parametrize(
    ("params", "notice"),
    [
        ({"step": "abc"}, "step: 'abc' is not a whole number; using 1500"),
        ({"step": "-5"}, "step: -5 is outside 0–1000000; using 1500"),
        (
            {"step": "600", "train_step": "50"},
            "train_step: 50 not used; the link's step=600 names the training step on this tab",
        ),
    ],
)
def test_a_bad_training_step_is_named(params: dict[str, str], notice: str) -> None:
    link = read_link({"tab": "training", **params})
    assert not link.lecture
    assert link.notices == (notice,)
    assert link.settings.train_step == (600 if "train_step" in params else DEFAULT.train_step)


@pytest.mark.parametrize("components", ["2d", "3d"])
def test_the_training_components_survive_a_real_url(components: str) -> None:
    """The Training tab's 3-D switch is in its link (issue 42): ``components=3d``, as the
    command line's ``--components`` says it; the plane, the default, is left out."""
    settings = replace(DEFAULT, train_step=600)
    params = query_from_settings(settings, tab="training", components=components)  # type: ignore[arg-type]
    assert ("components" in params) == (components == "3d")
    link = read_link(parse_qs(urlencode(params)))
    assert (link.components, link.settings, link.notices) == (components, settings, ())


def test_components_the_view_does_not_have_fall_back_to_the_plane() -> None:
    link = read_link({"tab": "training", "components": "<b>4d</b>"})
    assert link.components == "2d"
    assert link.notices == ("components: '<b>4d</b>' is not one of 2d, 3d; using 2d",)
    with pytest.raises(ValueError, match="components must be one of 2d, 3d"):
        query_from_settings(DEFAULT, components="4d")  # type: ignore[arg-type]
