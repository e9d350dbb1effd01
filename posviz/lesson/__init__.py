"""The lesson's words: what the page says, kept apart from the formulas that give its numbers.

Every sentence that states a fact about the numbers is built from them (the numbers choose
the verdict), and each is tested against numbers computed without posviz.

* :mod:`posviz.lesson.repeats`: the lesson sentence about a repeated token, and the
  similarity sentence;
* :mod:`posviz.lesson.schemes`: each positional scheme, the tensor shapes;
* :mod:`posviz.lesson.gpt2`: GPT-2's trained tables;
* :mod:`posviz.lesson.word_order`: the word-order comparison through self-attention;
* :mod:`posviz.lesson.geometry` and :mod:`posviz.lesson.distance`: the Geometry and
  Distance & length tabs;
* :mod:`posviz.lesson.lecture`: lecture mode's slides, with their questions and answers.
"""
