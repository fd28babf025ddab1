"""Corral's own extractor of chart data from matplotlib figures.

@e2b/code-interpreter gives a displayed figure's data to its caller as a
`chart` (the Chart types of the package's dist/index.d.ts: line, scatter,
bar, pie, box_and_whisker, superchart, unknown). This module computes that
JSON for Corral's python kernels; it was written for Corral from those type
definitions and shares no code with E2B's.

Loaded as an IPython extension (the kernel's command line gets
`--IPKernelApp.extensions=corral_charts`, or its alias `--ext=corral_charts`,
with this directory on PYTHONPATH), it adds a display formatter for
application/vnd.corral.chart+json, so a figure that ipykernel's inline
backend displays (plt.show(), a figure left at the end of a cell) carries
its chart in the same message as its image/png.

Decisions (the types leave these open):
- x_label/y_label are the labels' whole text, "" when unset; x_unit/y_unit
  are present only when the label ends in " (unit)" or " [unit]": "Time (s)"
  gives label "Time (s)" and unit "s".
- a bar's value is a number (its height, or width for barh), although
  BarData types it as a string: numbers are what E2B's clients get too.
- box min/max are the whisker ends (outliers lie beyond them).
- an Axes with nothing drawn is left out; an Axes with something drawn that
  is none of the five kinds (an image, a polar or 3D plot, text only, ...)
  is {"type": "unknown", "title": ..., "elements": []}; a figure with
  nothing drawn is None. When an Axes holds several kinds, the first of
  box, pie, bar, line, scatter wins; a line chart's elements include the
  Axes' scatter collections too.
- matplotlib's hidden labels ("_child0", "_nolegend_") are "".
- NaN and infinities are null; datetimes are ISO strings (naive when the
  data was); categorical values are their category strings.
"""
import datetime
import json
import math
import re
import warnings

MIME = 'application/vnd.corral.chart+json'
FIGURE = ('matplotlib.figure', 'Figure')
SCALES = ('linear', 'log', 'symlog', 'logit', 'function', 'functionlog',
          'asinh')
# The space keeps "f(x)" a label rather than a unit "x".
UNIT = re.compile(r'\s(?:\(([^()]+)\)|\[([^\[\]]+)\])\s*$')
MATHDEFAULT = re.compile(r'\\mathdefault\{(.*)\}')


def extract(fig):
    """The chart JSON (a dict) of a matplotlib Figure, or None.

    Never raises: the chart is extra, and the figure's image must still be
    displayed whatever its artists look like."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            chart = _clean(_figure(fig))
        # allow_nan=False: the JSON must parse in a browser too
        json.dumps(chart, allow_nan=False)
        return chart
    except Exception:  # pylint: disable=broad-except
        return None


def load_ipython_extension(ip):
    """Add the chart formatter to a running IPython shell.

    Registered by name, so matplotlib is imported only by the user's code,
    never by a kernel's start."""
    formatter = _formatter_class()(parent=ip.display_formatter)
    formatter.for_type_by_name(*FIGURE, extract)
    ip.display_formatter.formatters[MIME] = formatter


def unload_ipython_extension(ip):
    """%unload_ext corral_charts: figures get their image only."""
    ip.display_formatter.formatters.pop(MIME, None)


def _formatter_class():
    # Imported here so that extract() works without IPython.
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class ChartFormatter(BaseFormatter):
        """Formats as IPython's JSONFormatter does, under Corral's MIME."""
        format_type = Unicode(MIME)
        _return_type = (dict,)
        print_method = ObjectName('_repr_corral_chart_')

        def lookup_by_type(self, typ):
            # IPython's select_figure_formats(), run as the inline backend
            # loads (on the first figure) and on %matplotlib or a change of
            # InlineBackend.figure_formats, pops Figure from every
            # formatter, this one too: put it back before each lookup.
            self.deferred_printers.setdefault(FIGURE, extract)
            return super().lookup_by_type(typ)

    return ChartFormatter


# ---- figures and axes ------------------------------------------------------

def _figure(fig):
    charts = [c for c in map(_axes, _chart_axes(fig)) if c is not None]
    if not charts:
        return None
    if len(charts) == 1:
        return charts[0]
    return {'type': 'superchart', 'title': _suptitle(fig),
            'elements': charts}


def _chart_axes(fig):
    # A colorbar is an Axes of its own but only a key to another's colours.
    return [ax for ax in fig.get_axes()
            if ax.get_visible() and getattr(ax, '_colorbar', None) is None]


def _suptitle(fig):
    # Figure.get_suptitle() only exists from matplotlib 3.8.
    text = getattr(fig, '_suptitle', None)
    return text.get_text() if text is not None else ''


def _title(ax):
    return ax.get_title() or ax.get_title('left') or ax.get_title('right')


def _axes(ax):
    if ax.name != 'rectilinear':
        # polar and 3D points are not the x/y pairs the types describe
        return _unknown(ax)
    boxes, vert = _boxes(ax)
    if boxes:
        return _box_chart(ax, boxes, vert)
    wedges = _wedges(ax)
    if wedges:
        return _pie_chart(ax, wedges)
    bars = _bar_containers(ax)
    if bars:
        return _bar_chart(ax, bars)
    lines, dots = _data_lines(ax), _scatters(ax)
    if lines or dots:
        return _point_chart(ax, 'line' if lines else 'scatter', lines + dots)
    return _unknown(ax)


def _unknown(ax):
    drawn = [*ax.lines, *ax.collections, *ax.patches, *ax.images,
             *ax.texts, *ax.artists, *ax.tables]
    if not any(a.get_visible() for a in drawn):
        return None
    return {'type': 'unknown', 'title': _title(ax), 'elements': []}


def _chart2d(ax, kind):
    chart = {'type': kind, 'title': _title(ax)}
    for name, axis in (('x', ax.xaxis), ('y', ax.yaxis)):
        label = axis.get_label_text() or ''
        chart[name + '_label'] = label
        unit = UNIT.search(label)
        if unit:
            chart[name + '_unit'] = unit.group(1) or unit.group(2)
    return chart


def _label(artist):
    label = artist.get_label()
    # matplotlib marks its own, never shown, labels with a leading "_"
    return '' if label is None or str(label).startswith('_') else str(label)


# ---- line and scatter ------------------------------------------------------

def _data_lines(ax):
    from matplotlib.container import ErrorbarContainer, StemContainer
    parts = set()
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            parts.update(map(id, c[1]))  # the caps, drawn as marker lines
        elif isinstance(c, StemContainer):
            parts.add(id(c.baseline))
    # axhline and friends span the Axes, not data: their transform says so
    return [(line, _array(line.get_xydata())) for line in ax.lines
            if line.get_visible() and id(line) not in parts
            and line.get_transform().contains_branch(ax.transData)]


def _scatters(ax):
    from matplotlib.collections import PathCollection
    return [(c, _array(c.get_offsets())) for c in ax.collections
            if isinstance(c, PathCollection) and c.get_visible()]


def _array(xy):
    import numpy as np
    xy = np.ma.filled(np.ma.asarray(xy, dtype=float), np.nan)
    return xy.reshape(-1, 2)


def _point_chart(ax, kind, series):
    chart = _chart2d(ax, kind)
    for name, axis in (('x', ax.xaxis), ('y', ax.yaxis)):
        ticks = _ticks(axis)
        chart[name + '_ticks'] = _values(axis, [loc for loc, _ in ticks])
        chart[name + '_tick_labels'] = [label for _, label in ticks]
        chart[name + '_scale'] = _scale(axis)
    chart['elements'] = [
        {'label': _label(artist),
         'points': [list(p) for p in zip(_values(ax.xaxis, xy[:, 0]),
                                         _values(ax.yaxis, xy[:, 1]))]}
        for artist, xy in series]
    return chart


# ---- bar and pie -----------------------------------------------------------

def _bar_containers(ax):
    from matplotlib.container import BarContainer
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _bar_chart(ax, containers):
    chart = _chart2d(ax, 'bar')
    ticks = {'x': _ticks(ax.xaxis), 'y': _ticks(ax.yaxis)}
    chart['elements'] = [_bar(ax, c, rect, ticks) for c in containers
                         for rect in c.patches if rect.get_visible()]
    return chart


def _bar(ax, container, rect, ticks):
    x, y = rect.get_x(), rect.get_y()
    width, height = rect.get_width(), rect.get_height()
    if getattr(container, 'orientation', None) == 'horizontal':
        label = _label_at(ax.yaxis, ticks['y'], y + height / 2, abs(height) / 2)
        value = width
    else:
        label = _label_at(ax.xaxis, ticks['x'], x + width / 2, abs(width) / 2)
        value = height
    return {'label': label, 'value': value, 'group': _label(container)}


def _wedges(ax):
    from matplotlib.patches import Wedge
    return [p for p in ax.patches if isinstance(p, Wedge) and p.get_visible()]


def _pie_chart(ax, wedges):
    return {'type': 'pie', 'title': _title(ax),
            'elements': [{'label': _label(w), 'angle': abs(w.theta2 - w.theta1),
                          'radius': w.r} for w in wedges]}


# ---- box and whisker -------------------------------------------------------

def _boxes(ax):
    """The boxes of boxplots on ax, and whether they stand upright.

    matplotlib draws each box as plain Line2Ds in this order: [the box],
    whisker to the low end, whisker to the high end, [two caps], the median,
    [the mean], [the fliers]. The whisker pair is always there and is hard
    to mistake for anything else, so each box is found from it."""
    for vert in (True, False):
        xys = [_oriented(line, vert) for line in ax.lines]
        boxes = [b for b in (_box_at(xys, i) for i in range(len(xys) - 1)) if b]
        if boxes:
            return boxes, vert
    return [], True


def _oriented(line, vert):
    # (position, value) pairs, whichever way the boxes stand
    xy = _array(line.get_xydata())
    return xy if vert else xy[:, ::-1]


def _box_at(xys, i):
    low, high = xys[i], xys[i + 1]
    if not (_whisker(low, -1) and _whisker(high, 1)
            and low[0, 0] == high[0, 0] and low[0, 1] <= high[0, 1]):
        return None
    pos, q1, lo, q3, hi = low[0, 0], low[0, 1], low[1, 1], high[0, 1], high[1, 1]
    rest = xys[i + 2:i + 7]
    if len(rest) >= 2 and _level(rest[0], lo, pos) and _level(rest[1], hi, pos):
        rest = rest[2:]  # the caps
    if not rest or not (_level(rest[0], rest[0][0, 1], pos, strict=True)
                        and q1 <= rest[0][0, 1] <= q3):
        return None
    fliers = next((xy[:, 1] for xy in rest[1:3] if _fliers(xy, pos, lo, hi)), [])
    return pos, {'min': lo, 'first_quartile': q1, 'median': rest[0][0, 1],
                 'third_quartile': q3, 'max': hi, 'outliers': list(fliers)}


def _whisker(xy, direction):
    return (xy.shape == (2, 2) and bool(_finite(xy)) and xy[0, 0] == xy[1, 0]
            and (xy[1, 1] - xy[0, 1]) * direction >= 0)


def _level(xy, y, pos, strict=False):
    if xy.shape != (2, 2) or not _finite(xy) or not xy[0, 1] == xy[1, 1] == y:
        return False
    left, right = sorted(xy[:, 0])
    return left < pos < right if strict else left <= pos <= right


def _fliers(xy, pos, lo, hi):
    # a mean marker also sits at pos, but never beyond the whiskers
    ys = xy[:, 1]
    return bool(((xy[:, 0] == pos).all() and ((ys < lo) | (ys > hi)).all()))


def _finite(xy):
    import numpy as np
    return np.isfinite(xy).all()


def _box_chart(ax, boxes, vert):
    chart = _chart2d(ax, 'box_and_whisker')
    axis = ax.xaxis if vert else ax.yaxis
    ticks = _ticks(axis)
    chart['elements'] = [{'label': _label_at(axis, ticks, pos, 0), **stats}
                         for pos, stats in boxes]
    return chart


# ---- axes: ticks, scales, values -------------------------------------------

def _ticks(axis):
    """(location, label) of the major ticks that a draw would show."""
    locs = list(axis.get_majorticklocs())
    # all locations at once, as a draw does: a FixedFormatter counts them
    labels = axis.get_major_formatter().format_ticks(locs)
    lo, hi = sorted(axis.get_view_interval())
    slack = (hi - lo) * 1e-9
    return [(loc, _plain(label)) for loc, label in zip(locs, labels)
            if lo - slack <= loc <= hi + slack]


def _plain(label):
    # log axes label ticks "$\mathdefault{10^{2}}$": mathtext for the renderer
    label = MATHDEFAULT.sub(r'\1', str(label))
    if len(label) > 1 and label.startswith('$') and label.endswith('$'):
        label = label[1:-1]
    return label


def _label_at(axis, ticks, value, half_width):
    """The label of the tick within half_width of value, else value itself."""
    if ticks:
        loc, label = min(ticks, key=lambda t: abs(t[0] - value))
        if abs(loc - value) <= half_width + 1e-9 * max(1.0, abs(value)):
            return label
    shown = _values(axis, [value])[0]
    if shown is None:
        return ''
    return shown if isinstance(shown, str) else '%g' % shown


def _kind(axis):
    from matplotlib import category, dates
    converter = getattr(axis, 'converter', None)
    if isinstance(converter, category.StrCategoryConverter):
        return 'categorical'
    if (type(converter).__module__ == dates.__name__
            or isinstance(axis.get_major_locator(), dates.DateLocator)):
        return 'datetime'
    return None


def _scale(axis):
    scale = axis.get_scale()
    return _kind(axis) or (scale if scale in SCALES else 'linear')


def _values(axis, values):
    """matplotlib's floats on axis as the JSON values the caller plotted."""
    convert = _converter(axis)
    return [convert(v) if math.isfinite(v) else None
            for v in map(float, values)]


def _converter(axis):
    kind = _kind(axis)
    if kind == 'datetime':
        return _date_converter(axis)
    if kind == 'categorical':
        return _category_converter(axis)
    return lambda v: v


def _date_converter(axis):
    from matplotlib import dates
    # The date converter keeps the data's time zone as the axis' units.
    tz = axis.units if isinstance(axis.units, datetime.tzinfo) else None

    def convert(v):
        d = dates.num2date(v, tz=tz or datetime.timezone.utc)
        return (d if tz else d.replace(tzinfo=None)).isoformat()
    return convert


def _category_converter(axis):
    # UnitData keeps its category -> position map only as _mapping.
    mapping = getattr(axis.units, '_mapping', None) or {}
    names = {float(pos): str(name) for name, pos in mapping.items()}
    return lambda v: names.get(v, v)


def _clean(value):
    """value with plain Python types only, and no NaN or infinity."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, 'tolist'):  # numpy arrays and scalars
        return _clean(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int)):
        return value
    return str(value)
