"""`notebooks/quickstart.ipynb` runs top to bottom in a fresh kernel (nbclient), so it cannot
rot: it ingests bikes.mp4, answers with evidence, and draws the timeline and the frames."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import videomem

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


@pytest.mark.slow
def test_quickstart_notebook_ingests_answers_and_plots(tmp_path, monkeypatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    # the kernel runs in tmp_path: it must import the videomem under test, whatever the path says
    source = str(Path(videomem.__file__).parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream" and o.name == "stdout")
    assert "sample: 1 done" in text and "caption: 1 done" in text and "1 video(s), 1 clip(s), 10 s of video" in text
    assert text.count("Answer: ") == 2 and "Answer: B. gray" in text  # the caption says "mostly gray"
    assert text.count("  bikes 00:00:00-00:00:10 (event)") == 2  # each answer rests on the clip's caption
    figures = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(figures) == 2  # the evidence timeline and the retrieved frames
    assert (tmp_path / "quickstart-store" / "memory.sqlite").is_file()
