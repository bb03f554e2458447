"""Presets: the source studies' evaluations as ready-made experiment grids.

``ccfair preset NAME [OPTIONS]`` runs ``ccfair.presets.NAME.main(OPTIONS)``.
"""
