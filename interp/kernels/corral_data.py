"""corral_data: Corral's own `data` result for @e2b/code-interpreter.

An IPython extension, loaded in every python kernel with corral_charts
(decision 0088): a pandas DataFrame displayed (a cell's last value, or
display(df)) also carries its table as JSON under
application/vnd.corral.data+json, which corral-interp names `data`:
{"columns": [...], "index": [...], "data": [[row], ...]}, pandas' own
"split" form (NaN as null, dates in ISO 8601). pandas is never imported by
the extension itself: the formatter is registered by the type's name.
"""
import json

MIME = 'application/vnd.corral.data+json'
FRAME = ('pandas.core.frame', 'DataFrame')
MAX_CELLS = 100_000  # a larger frame's table stays in text and html only


def table(df):
    """The frame's table, or None (too large, or anything failed: a cell's
    output must never break because of this)."""
    try:
        if df.size > MAX_CELLS:
            return None
        return json.loads(df.to_json(orient='split', date_format='iso', default_handler=str))
    except Exception:  # noqa: BLE001: the result is optional, the cell is not
        return None


def load_ipython_extension(ip):
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class DataFormatter(BaseFormatter):
        """Formats as IPython's JSONFormatter does, under Corral's MIME."""
        format_type = Unicode(MIME)
        _return_type = (dict,)
        print_method = ObjectName('_repr_corral_data_')

    formatter = DataFormatter(parent=ip.display_formatter)
    formatter.for_type_by_name(*FRAME, table)
    ip.display_formatter.formatters[MIME] = formatter
