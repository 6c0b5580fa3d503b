"""Figures for the notebooks: one module per picture family, all built on matplotlib.

Plotting lives here, not in the notebooks, so a notebook cell stays one call and a
``plt.show()``. ``import lessons`` does not import matplotlib; ``import lessons.figures``
(or any of its modules) does, and puts the house style of :mod:`lessons.figures.style`
(figure size, dpi, font sizes, legend defaults) into ``matplotlib.rcParams``.
"""

from . import style

style.apply()
