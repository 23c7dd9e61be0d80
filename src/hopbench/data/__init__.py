"""Dataset contract and loaders for every supported benchmark file format."""

from hopbench.data.registry import FORMATS, load_dataset
from hopbench.data.schema import Dataset, Passage, Question, passage_id

__all__ = ["Dataset", "Passage", "Question", "passage_id", "FORMATS", "load_dataset"]
