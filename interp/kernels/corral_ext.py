"""corral_ext: the one IPython extension corral-interp loads in every python
kernel (--IPKernelApp.extensions=corral_ext), which loads Corral's own result
formatters: chart data of matplotlib figures (corral_charts) and a
DataFrame's table (corral_data). Decision 0088."""
import corral_charts
import corral_data


def load_ipython_extension(ip):
    corral_charts.load_ipython_extension(ip)
    corral_data.load_ipython_extension(ip)
