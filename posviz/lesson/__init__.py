"""The lesson's words: what the page says, kept apart from the formulas that give its numbers.

* :mod:`posviz.lesson.schemes`: each positional scheme, the repeated token, the tensor shapes;
* :mod:`posviz.lesson.gpt2`: GPT-2's trained tables;
* :mod:`posviz.lesson.word_order`: the word-order comparison through self-attention;
* :mod:`posviz.lesson.lecture`: lecture mode's steps.
"""
