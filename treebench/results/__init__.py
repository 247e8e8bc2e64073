"""Result rows: the cell record (`cell`), schema, per-cell files, consolidation into tables,
provenance."""
