"""Labelled data: loaders and the common example shape."""

from faithwatch.data.loaders import DATASETS, data_root, load_dataset, load_jsonl
from faithwatch.data.schema import LabelledExample, LabelledSpan, sentence_label

__all__ = ["DATASETS", "LabelledExample", "LabelledSpan", "data_root", "load_dataset", "load_jsonl", "sentence_label"]
