"""Figures for the notebooks: one module per picture family, all built on matplotlib.

Plotting lives here, not in the notebooks, so a notebook cell stays one call and a
``plt.show()``. Modules import matplotlib themselves; ``import lessons`` does not.
"""
