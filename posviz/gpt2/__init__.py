"""GPT-2 124M's trained ``wte`` and ``wpe`` tables, read from the Hugging Face Hub once.

* :mod:`posviz.gpt2.hub`: one tensor of a ``.safetensors`` file on the Hub, by byte ranges;
* :mod:`posviz.gpt2.store`: the on-disk cache of both tables, checked and memory-mapped.
"""
