"""The attention parts of the Show-the-code script (:mod:`posviz.codegen`): ALiBi's slopes and
T5's buckets written out, for compare mode and the Attention tab.

The functions are written as their reference implementations write them (ALiBi's
``get_slopes`` from ofirpress/attention_with_linear_biases, T5's ``_relative_position_bucket``
with ``bidirectional=False``), not as posviz computes them, so a reader can check posviz's
numbers against the originals.

>>> "def get_slopes(n):" in BIAS_FUNCTIONS and "def relative_position_bucket(" in BIAS_FUNCTIONS
True
"""

from __future__ import annotations

from typing import Final

from posviz.schemes import T5_MAX_DISTANCE, T5_NUM_BUCKETS

BIAS_FUNCTIONS: Final = f"""

# ALiBi (Press et al. 2022): the slope of each head, as its reference code computes them.
def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    # not a power of two: the slopes of the power below, then every other one of the next
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


# T5 (Raffel et al. 2020): the bucket of a relative position j - i (key minus query), as T5's
# _relative_position_bucket computes it for a causal model (bidirectional=False).
def relative_position_bucket(
    relative_position, num_buckets={T5_NUM_BUCKETS}, max_distance={T5_MAX_DISTANCE}
):
    relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    # now relative_position is in the range [0, inf): how many tokens back the key is
    max_exact = num_buckets // 2  # half of the buckets: one per distance 0 ... 15
    is_small = relative_position < max_exact
    # the other half: logarithmically wider up to max_distance, then one bucket for the rest
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    return torch.where(is_small, relative_position, relative_position_if_large)
"""
