from .enums import ColumnSettings, Mode, RowSettings, Units, Verbosity
from .model_statistics import ModelStatistics
from .torchinfo import clear_cached_forward_pass, summary

__all__ = (
    "ColumnSettings",
    "Mode",
    "ModelStatistics",
    "RowSettings",
    "Units",
    "Verbosity",
    "clear_cached_forward_pass",
    "summary",
)
__version__ = "1.8.0"
