"""Small data files written by tests in more than one package."""

from __future__ import annotations

from pathlib import Path


def missing_values_csv(tmp_path: Path) -> Path:
    """40 rows; `age` misses 6 values, `score` 8 (written `?`), `colour` 5."""
    rows = ["age,score,colour,y"]
    for i in range(40):
        age = "" if i % 7 == 0 else str(20 + i)
        score = "?" if i % 5 == 0 else f"{30 + (i * 13) % 50}.5"
        colour = "" if i % 9 == 0 else ["red", "blue", "green"][i % 3]
        y = "yes" if (i * 13) % 50 > 25 or score == "?" else "no"
        rows.append(f"{age},{score},{colour},{y}")
    p = tmp_path / "mv.csv"
    p.write_text("\n".join(rows) + "\n")
    return p
