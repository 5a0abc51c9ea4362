"""One module per benchmark page: ``page(results)`` returns the Markdown, ``figure(results)``
(where the page has a plot) the matplotlib figure, both from the JSON a run wrote.

``_harness.main`` calls them after a run, and alone with ``--render-only``.
"""
