"""Result rows: schema, per-cell files, consolidation into tables, provenance."""
