"""tests/interp/charts_test.py: interp/kernels/corral_charts.py, Corral's
chart extractor, on figures drawn with the Agg backend, as an IPython
extension in a fresh shell, and end to end in a real ipykernel.

Run with Debian's python (the one with ipykernel and matplotlib):
    /usr/bin/python3 tests/interp/charts_test.py
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import unittest

os.environ['MPLBACKEND'] = 'Agg'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, 'interp', 'kernels')
sys.path.insert(0, KERNELS)

import matplotlib  # noqa: E402
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import corral_charts  # noqa: E402

MIME = 'application/vnd.corral.chart+json'


def chart_of(fig):
    """extract(fig), checked to be strict JSON, the figure then closed."""
    try:
        chart = corral_charts.extract(fig)
        json.dumps(chart, allow_nan=False)
        return chart
    finally:
        plt.close(fig)


def drawn_ticks(axis):
    """The ticks' locations and labels as matplotlib itself draws them."""
    axis.figure.canvas.draw()
    lo, hi = sorted(axis.get_view_interval())
    # get_ticklabels() also has the labels of ticks outside the view
    ticks = [(loc, t.get_text()) for loc, t in
             zip(axis.get_majorticklocs(), axis.get_ticklabels()) if lo <= loc <= hi]
    return [float(loc) for loc, _ in ticks], [text for _, text in ticks]


class ChartsTest(unittest.TestCase):
    def test_line(self):
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2], [1, 4, 9], label='squares')
        ax.plot([0, 1, 2], [0, np.nan, 2], label='_hidden')
        ax.axhline(3)  # spans the Axes: not data
        ax.grid(True)
        ax.set_title('Growth')
        ax.set_xlabel('Time (s)')
        ax.set_ylabel('Distance [m]')
        locs, labels = drawn_ticks(ax.xaxis)
        ylocs, ylabels = drawn_ticks(ax.yaxis)
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'line')
        self.assertEqual(chart['title'], 'Growth')
        self.assertEqual((chart['x_label'], chart['x_unit']), ('Time (s)', 's'))
        self.assertEqual((chart['y_label'], chart['y_unit']), ('Distance [m]', 'm'))
        self.assertEqual((chart['x_scale'], chart['y_scale']), ('linear', 'linear'))
        self.assertEqual(chart['x_ticks'], [float(v) for v in locs])
        self.assertEqual(chart['x_tick_labels'], labels)
        self.assertEqual(chart['y_ticks'], [float(v) for v in ylocs])
        self.assertEqual(chart['y_tick_labels'], ylabels)
        self.assertEqual(chart['elements'], [
            {'label': 'squares', 'points': [[0.0, 1.0], [1.0, 4.0], [2.0, 9.0]]},
            {'label': '', 'points': [[0.0, 0.0], [1.0, None], [2.0, 2.0]]}])

    def test_no_unit(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2])
        ax.set_xlabel('f(x)')
        chart = chart_of(fig)
        self.assertEqual(chart['x_label'], 'f(x)')
        self.assertNotIn('x_unit', chart)
        self.assertNotIn('y_unit', chart)

    def test_scatter(self):
        fig, ax = plt.subplots()
        ax.scatter([1, 2, 3], [3, 1, 2], label='dots')
        ax.scatter(np.array([4.5]), np.array([np.float32(0.5)]))
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'scatter')
        self.assertEqual(chart['elements'], [
            {'label': 'dots', 'points': [[1.0, 3.0], [2.0, 1.0], [3.0, 2.0]]},
            {'label': '', 'points': [[4.5, 0.5]]}])
        self.assertTrue(chart['x_ticks'] and chart['x_tick_labels'])

    def test_grouped_bar(self):
        fig, ax = plt.subplots()
        x = np.arange(3)
        ax.bar(x - 0.2, [1, 2, 3], 0.4, label='2023')
        ax.bar(x + 0.2, np.array([3.5, 2, 1]), 0.4, label='2024')
        ax.set_xticks(x, ['north', 'south', 'east'])
        ax.set_ylabel('Sales (EUR)')
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'bar')
        self.assertEqual(chart['y_unit'], 'EUR')
        self.assertEqual(chart['elements'], [
            {'label': 'north', 'value': 1, 'group': '2023'},
            {'label': 'south', 'value': 2, 'group': '2023'},
            {'label': 'east', 'value': 3, 'group': '2023'},
            {'label': 'north', 'value': 3.5, 'group': '2024'},
            {'label': 'south', 'value': 2, 'group': '2024'},
            {'label': 'east', 'value': 1, 'group': '2024'}])

    def test_categorical_and_horizontal_bar(self):
        fig, ax = plt.subplots()
        ax.barh(['a', 'b'], [5, -2])
        chart = chart_of(fig)
        self.assertEqual([(e['label'], e['value'], e['group']) for e in chart['elements']],
                         [('a', 5, ''), ('b', -2, '')])

    def test_pie(self):
        fig, ax = plt.subplots()
        ax.pie([1, 2, 3], labels=['cats', 'dogs', 'fish'], autopct='%1.0f%%')
        ax.set_title('Pets')
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'pie')
        self.assertEqual(chart['title'], 'Pets')
        self.assertEqual([e['label'] for e in chart['elements']], ['cats', 'dogs', 'fish'])
        for e, want in zip(chart['elements'], [60, 120, 180]):
            self.assertAlmostEqual(e['angle'], want, places=4)
            self.assertEqual(e['radius'], 1)

    def boxplot_data(self):
        rng = np.random.default_rng(7)
        return [np.r_[rng.normal(10, 2, 200), [30, 31, -10]], rng.normal(0, 1, 50)]

    def check_boxes(self, elements, data, labels):
        self.assertEqual([e['label'] for e in elements], labels)
        for e, d in zip(elements, data):
            q1, med, q3 = np.percentile(d, [25, 50, 75])
            lo_fence, hi_fence = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
            self.assertAlmostEqual(e['first_quartile'], q1)
            self.assertAlmostEqual(e['median'], med)
            self.assertAlmostEqual(e['third_quartile'], q3)
            self.assertAlmostEqual(e['min'], d[d >= lo_fence].min())
            self.assertAlmostEqual(e['max'], d[d <= hi_fence].max())
            self.assertEqual(sorted(e['outliers']),
                             sorted(d[(d < lo_fence) | (d > hi_fence)].tolist()))

    def test_boxplot(self):
        data = self.boxplot_data()
        fig, ax = plt.subplots()
        ax.boxplot(data, labels=['A', 'B'])
        ax.set_ylabel('Weight (kg)')
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'box_and_whisker')
        self.assertEqual(chart['y_unit'], 'kg')
        self.check_boxes(chart['elements'], data, ['A', 'B'])
        self.assertTrue({-10, 30, 31} <= set(chart['elements'][0]['outliers']))
        self.assertEqual(chart['elements'][1]['outliers'], [])

    def test_boxplot_variants(self):
        data = self.boxplot_data()
        for kw in [dict(vert=False), dict(patch_artist=True, notch=True, showmeans=True),
                   dict(showcaps=False, showmeans=True, meanline=True),
                   dict(showbox=False, showfliers=False)]:
            with self.subTest(**kw):
                fig, ax = plt.subplots()
                ax.boxplot(data, **kw)
                chart = chart_of(fig)
                self.assertEqual(chart['type'], 'box_and_whisker')
                if kw.get('showfliers', True):
                    self.check_boxes(chart['elements'], data, ['1', '2'])
                else:
                    self.assertEqual([e['outliers'] for e in chart['elements']], [[], []])

    def test_subplots_superchart(self):
        fig, (a, b, c) = plt.subplots(1, 3)
        a.plot([1, 2, 3])
        b.bar(['x', 'y'], [1, 2])
        b.set_title('bars')
        # c is left empty: not a chart
        fig.suptitle('Overview')
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'superchart')
        self.assertEqual(chart['title'], 'Overview')
        self.assertEqual([e['type'] for e in chart['elements']], ['line', 'bar'])
        self.assertEqual(chart['elements'][1]['title'], 'bars')

    def test_one_axes_of_several_is_its_chart(self):
        fig, (a, b) = plt.subplots(2)
        b.scatter([1], [2])
        self.assertEqual(chart_of(fig)['type'], 'scatter')

    def test_log_scale(self):
        fig, ax = plt.subplots()
        ax.plot([1, 10, 100, 1000], [1, 100, 1e4, 1e6])
        ax.set_xscale('log')
        ax.set_yscale('symlog')
        chart = chart_of(fig)
        self.assertEqual((chart['x_scale'], chart['y_scale']), ('log', 'symlog'))
        self.assertIn('10^{2}', chart['x_tick_labels'])
        self.assertIn(100.0, chart['x_ticks'])

    def test_datetime_x(self):
        days = [datetime.datetime(2024, 3, d) for d in (1, 2, 3)]
        fig, ax = plt.subplots()
        ax.plot(days, [5, 6, 4], label='temp')
        ax.plot(np.array(['2024-03-01T12:00'], dtype='datetime64[m]'), [5.5], 'o')
        chart = chart_of(fig)
        self.assertEqual(chart['x_scale'], 'datetime')
        self.assertEqual(chart['elements'][0]['points'],
                         [['2024-03-01T00:00:00', 5.0], ['2024-03-02T00:00:00', 6.0],
                          ['2024-03-03T00:00:00', 4.0]])
        self.assertEqual(chart['elements'][1]['points'], [['2024-03-01T12:00:00', 5.5]])
        self.assertTrue(chart['x_ticks'])
        for tick in chart['x_ticks']:
            datetime.datetime.fromisoformat(tick)

    def test_categorical_x(self):
        fig, ax = plt.subplots()
        ax.plot(['mon', 'tue', 'wed'], [3, 1, 2])
        ax.scatter(['tue'], [5])
        chart = chart_of(fig)
        self.assertEqual(chart['type'], 'line')
        self.assertEqual(chart['x_scale'], 'categorical')
        self.assertEqual(chart['x_ticks'], ['mon', 'tue', 'wed'])
        self.assertEqual(chart['x_tick_labels'], ['mon', 'tue', 'wed'])
        self.assertEqual(chart['elements'][0]['points'],
                         [['mon', 3.0], ['tue', 1.0], ['wed', 2.0]])
        self.assertEqual(chart['elements'][1]['points'], [['tue', 5.0]])

    def test_empty(self):
        self.assertIsNone(chart_of(plt.figure()))
        fig, _ = plt.subplots(2, 2)
        self.assertIsNone(chart_of(fig))

    def test_unknown(self):
        fig, ax = plt.subplots()
        ax.imshow([[1, 2], [3, 4]])
        fig.colorbar(ax.images[0])
        ax.set_title('heat')
        self.assertEqual(chart_of(fig), {'type': 'unknown', 'title': 'heat', 'elements': []})

    def test_never_raises(self):
        self.assertIsNone(corral_charts.extract(None))
        self.assertIsNone(corral_charts.extract(object()))
        fig, ax = plt.subplots()
        ax.plot([1, 2])
        ax.get_lines()[0].get_xydata = None  # an artist that breaks
        self.assertIsNone(chart_of(fig))


class ExtensionTest(unittest.TestCase):
    def test_fresh_shell(self):
        """Loading does not import matplotlib; a Figure then gets both formats."""
        code = r'''
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
t = time.perf_counter()
ip.extension_manager.load_extension('corral_charts')
took = time.perf_counter() - t
assert 'matplotlib' not in sys.modules, 'loading imported matplotlib'
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3])
# what the inline backend does as it loads: it pops Figure from every formatter
from IPython.core.pylabtools import select_figure_formats
select_figure_formats(ip, {'png'})
data, _ = ip.display_formatter.format(fig)
assert data['image/png']
print(json.dumps({'took': took, 'mimes': sorted(data), 'chart': data.get(MIME)}))
'''.replace('MIME', repr(MIME))
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                             env={**os.environ, 'PYTHONPATH': KERNELS}, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f'\n  load_ipython_extension took {result["took"] * 1000:.2f} ms',
              file=sys.stderr)
        self.assertLess(result['took'], 0.5)
        self.assertIn(MIME, result['mimes'])
        self.assertEqual(result['chart']['type'], 'line')


class KernelTest(unittest.TestCase):
    """A real ipykernel, started as Corral starts one, plus the extension."""

    @classmethod
    def setUpClass(cls):
        try:
            from jupyter_client.manager import KernelManager
        except ImportError:
            raise unittest.SkipTest('jupyter_client is not installed')
        cls.km = KernelManager(kernel_name='python3')
        # The spec's argv, "python3 -m ipykernel_launcher -f {connection_file}"
        # as Corral's, plus the extension; jupyter_client runs a "python3"
        # spec as sys.executable, not the PATH one that may lack ipykernel.
        cls.km.start_kernel(extra_arguments=['--IPKernelApp.extensions=corral_charts'],
                            env={**os.environ, 'PYTHONPATH': KERNELS,
                                 'MPLBACKEND': 'module://matplotlib_inline.backend_inline'},
                            cwd=tempfile.gettempdir())
        cls.kc = cls.km.client()
        cls.kc.start_channels()
        cls.kc.wait_for_ready(timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def run_cell(self, code):
        msg_id = self.kc.execute(code)
        messages = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=60)
            if msg['parent_header'].get('msg_id') != msg_id:
                continue
            if msg['msg_type'] == 'status' and msg['content']['execution_state'] == 'idle':
                return messages
            messages.append(msg)

    def charts(self, messages):
        self.assertEqual([m for m in messages if m['msg_type'] in ('error', 'stream')], [])
        return [m['content']['data'] for m in messages
                if m['msg_type'] in ('display_data', 'execute_result')
                and 'image/png' in m['content']['data'] and MIME in m['content']['data']]

    def test_show(self):
        charts = self.charts(self.run_cell(
            'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()'))
        self.assertEqual(len(charts), 1)
        self.assertEqual(charts[0][MIME]['type'], 'line')
        self.assertEqual(charts[0][MIME]['elements'][0]['points'],
                         [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]])

    def test_figure_left_at_the_end(self):
        charts = self.charts(self.run_cell(
            'import matplotlib.pyplot as plt\n'
            'fig, ax = plt.subplots()\nax.pie([1, 1], labels=["a", "b"])\nfig'))
        self.assertTrue(charts)
        self.assertEqual({c[MIME]['type'] for c in charts}, {'pie'})

    def test_other_outputs_untouched(self):
        messages = self.run_cell('{"a": 1}')
        results = [m['content']['data'] for m in messages if m['msg_type'] == 'execute_result']
        self.assertEqual(results, [{'text/plain': "{'a': 1}"}])


if __name__ == '__main__':
    unittest.main(verbosity=2)
